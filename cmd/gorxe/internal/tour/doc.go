// Package tour is gorxe tour: nine packets of real kernel rxe traffic, each told in words for a
// reader who knows TCP, then decoded field by field as gorxe dump -v decodes any capture.
package tour
