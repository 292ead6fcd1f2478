// Package mr owns registered memory: protection domains, memory regions as page tables, memory
// windows, the device-wide key table, and every byte-level access the transport makes to user memory.
//
// It is one of gorxe's engine packages. Programs embed gorxe through the root package,
// github.com/gorxe/gorxe, whose PD, MR, MW and Buffer wrap this package's objects and whose
// aliases (Access, SGE, MWBind, FastReg, ...) name the types a program fills in.
//
// # Keys
//
// A key is a 24-bit table index above an 8-bit variant (key>>8 selects the object, the whole key must
// match). Memory regions and memory windows use disjoint index ranges, so [IsMW] is decided by the
// index alone. Every registration, re-registration, fast registration and window bind changes the
// variant, so a key handed out earlier stops working.
//
// # Concurrency
//
// Lookups are lock-free: a lookup takes a hold on the region (a counter, no mutex), checks key,
// protection domain, access and range, and returns a [Span]. Control operations (rereg, dereg,
// fast registration, invalidation, binds) first move the object to a busy state and wait for the
// holds to drain, so after they return no access through the old translation is still running.
// Spans are therefore short-lived: take one per packet, copy, and Release it before doing anything
// that may change the same region (invalidation, dereg) from the same goroutine.
//
// # Errors
//
// Data-path calls (lookups, copies, scatter/gather, atomics, fast registration, binds and
// invalidations executed for work requests) return bare sentinel errors so a flood of bad keys
// never allocates; verbs-style control calls return an [*Error] that wraps the same sentinels.
package mr
