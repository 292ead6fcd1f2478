// Package counter is gorxe's one registry of statistics: an enumerated ID per counter with its
// name (rxe's hw_counter name where rxe has one) and help text in one table, and a fixed-size set
// of atomic counters that each QP and each device keep.
//
// Adding a counter is one edit to ids.go: a constant and its table row. Everything that lists
// counters (Device.Counters, QP.Counters, the tools) enumerates the table.
package counter
