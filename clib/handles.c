//go:build gorxe_clib

// The set of rdma_cm handles (ids, event channels, events) the library handed the program and has
// not freed. librdmacm dereferences whatever pointer it is given; this library looks the pointer up
// first, so a program that passes a handle it already destroyed gets EINVAL rather than a crash
// in the library (perftest's -R client retries its connection with ids it destroyed).

#include <pthread.h>
#include <search.h>
#include <stdlib.h>

#include "cm.h"

static pthread_mutex_t handles_mu = PTHREAD_MUTEX_INITIALIZER;
static void *handles; // a tsearch tree of pointers

static int by_address(const void *a, const void *b) {
	return (a > b) - (a < b);
}

int gx_handle_add(const void *p) {
	pthread_mutex_lock(&handles_mu);
	int ok = tsearch(p, &handles, by_address) != NULL;
	pthread_mutex_unlock(&handles_mu);
	return ok;
}

void gx_handle_del(const void *p) {
	pthread_mutex_lock(&handles_mu);
	tdelete(p, &handles, by_address);
	pthread_mutex_unlock(&handles_mu);
}

int gx_handle_live(const void *p) {
	if (!p)
		return 0;
	pthread_mutex_lock(&handles_mu);
	int ok = tfind(p, &handles, by_address) != NULL;
	pthread_mutex_unlock(&handles_mu);
	return ok;
}
