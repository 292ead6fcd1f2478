// Command clib is gorxe's drop-in libibverbs.so.1: a C library, built with cgo against the
// distribution's rdma-core headers, that runs unmodified verbs programs (ibv_devinfo, the
// ibv_*_pingpong tools, ...) on gorxe's public verbs API.
//
// It is built only by `make clib`, with the build tag gorxe_clib and -buildmode=c-shared: the
// tag keeps the cgo code and its need for the rdma-core headers out of `go build ./...` and
// `go test ./...`, so the rest of gorxe stays pure Go. The Makefile writes
// build/clib/libibverbs.so.1 (SONAME libibverbs.so.1) and build/clib/librdmacm.so.1, a symlink to
// the same file: one process must never load two Go runtimes. Its version script, generated from
// the installed libibverbs.so.1 and librdmacm.so.1 by clib/internal/vscript, defines every
// version node and symbol they define; what gorxe cannot do yet answers EOPNOTSUPP.
//
// Run a program on it with LD_LIBRARY_PATH=build/clib and GORXE_ADDR naming the interface or
// address its device binds to. The tests in this directory build the library and run the
// distribution's own binaries on it; they skip when rdma-core's development files or tools are
// missing.
package main

// main never runs: the library's entry points are its C functions, and -buildmode=c-shared
// builds a main package.
func main() {}
