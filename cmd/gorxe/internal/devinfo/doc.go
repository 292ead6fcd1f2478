// Package devinfo implements gorxe's peer of rdma-core's ibv_devinfo: the device list and each
// device's attributes, port attributes and GID table, printed in ibv_devinfo's layout.
package devinfo
