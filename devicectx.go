package gorxe

import "github.com/gorxe/gorxe/clock"

// Clock returns the device's time source (Config.Clock, or the real clock): the one its
// transport timers run on. A layer built on the device, such as a connection manager, times its
// own protocol with it, so that a test stepping a fake clock, or running in a testing/synctest
// bubble, steps everything together.
func (d *Device) Clock() clock.Clock { return d.cfg.clk }

// Done returns a channel that is closed once Close has released the device, so that a layer
// built on it can stop waiting for what the device will no longer deliver and report
// ErrDeviceClosed.
func (d *Device) Done() <-chan struct{} { return d.done }
