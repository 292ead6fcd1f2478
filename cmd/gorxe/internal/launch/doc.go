// Package launch is gorxe exec: it runs an unmodified C verbs or RDMA-CM program on gorxe's C
// library, by putting the library first on LD_LIBRARY_PATH, setting GORXE_ADDR and replacing
// itself with the program.
package launch
