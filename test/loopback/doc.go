// Package loopback runs the gorxe command-line tools as separate processes talking over the
// loopback interface, each test on its own 127.x.y.z addresses so that tests of parallel packages
// never compete for a UDP port.
package loopback
