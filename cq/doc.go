// Package cq implements completion queues and completion channels: the objects through which the
// transport reports finished work requests and users poll for them (ibv_cq, ibv_comp_channel).
//
// It is one of gorxe's engine packages. Programs embed gorxe through the root package,
// github.com/gorxe/gorxe, whose CQ and CompChannel wrap this package's objects and whose aliases
// (WC, WCStatus, WCOpcode, ...) name the types a program reads.
package cq
