// Package cq implements completion queues and completion channels: the objects through which the
// transport reports finished work requests and users poll for them (ibv_cq, ibv_comp_channel).
package cq
