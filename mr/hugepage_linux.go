package mr

import "golang.org/x/sys/unix"

// mmapHuge maps n bytes of huge pages (MAP_HUGETLB), which fails when the system has none free.
func mmapHuge(n, prot, flags int) ([]byte, error) {
	return unix.Mmap(-1, 0, n, prot, flags|unix.MAP_HUGETLB)
}

// adviseHuge hints that mem may be backed by transparent huge pages; the kernel may or may not.
func adviseHuge(mem []byte) { _ = unix.Madvise(mem, unix.MADV_HUGEPAGE) }
