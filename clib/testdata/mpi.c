// An MPI program for two ranks, run by Open MPI over UCX on gorxe's library: two-sided messages
// of 8 bytes (eager) and 1 MiB (rendezvous, UCX's RDMA), a reduction, and one-sided puts and
// gets in a window. Each rank checks what it received; rank 0 prints "ok" when all holds.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(c)                                                                                 \
	do {                                                                                     \
		if (!(c)) {                                                                      \
			fprintf(stderr, "mpi.c:%d: check failed: %s\n", __LINE__, #c);            \
			MPI_Abort(MPI_COMM_WORLD, 1);                                            \
		}                                                                                \
	} while (0)

enum { BIG = 1 << 20, ROUNDS = 10, WIN = 4096 };

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank, n;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	CHECK(n == 2);
	int peer = 1 - rank;

	// Ping-pong: rank 0 sends round r's pattern, rank 1 answers with the next one.
	unsigned char *buf = malloc(BIG);
	CHECK(buf != NULL);
	const int sizes[] = {8, BIG};
	for (int k = 0; k < 2; k++) {
		int size = sizes[k];
		for (int r = 0; r < ROUNDS; r++) {
			if (rank == 0) {
				memset(buf, r, size);
				MPI_Send(buf, size, MPI_BYTE, peer, r, MPI_COMM_WORLD);
				MPI_Recv(buf, size, MPI_BYTE, peer, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				CHECK(buf[0] == r + 1 && buf[size - 1] == r + 1);
			} else {
				MPI_Recv(buf, size, MPI_BYTE, peer, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
				CHECK(buf[0] == r && buf[size - 1] == r);
				memset(buf, r + 1, size);
				MPI_Send(buf, size, MPI_BYTE, peer, r, MPI_COMM_WORLD);
			}
		}
	}

	long mine = 10 + rank, sum = 0;
	MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	CHECK(sum == 21);

	// One-sided: each rank puts its rank into the peer's window, then reads the peer's back.
	long *win_mem;
	MPI_Win win;
	MPI_Win_allocate(WIN, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem, &win);
	memset(win_mem, 0, WIN);
	MPI_Win_fence(0, win);
	long val = 100 + rank;
	MPI_Put(&val, 1, MPI_LONG, peer, 3, 1, MPI_LONG, win);
	MPI_Win_fence(0, win);
	CHECK(win_mem[3] == 100 + peer);
	long got = 0;
	MPI_Get(&got, 1, MPI_LONG, peer, 3, 1, MPI_LONG, win);
	MPI_Win_fence(0, win);
	CHECK(got == 100 + rank);
	MPI_Win_free(&win);

	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("ok\n");
	free(buf);
	MPI_Finalize();
	return 0;
}
