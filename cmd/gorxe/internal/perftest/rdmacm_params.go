package perftest

// finishRDMACM applies perftest's rules for -R, -z and -T (force_dependencies): -R runs the
// exchange over RDMA-CM too, and TOS is only for RDMA-CM's QPs.
func (p *Params) finishRDMACM() error {
	if !p.RDMACM {
		if p.TOS != defTOS {
			return usageError(" TOS only valid for rdma_cm based QP and RawEth QP ")
		}
		return nil
	}
	if p.Conn == UC {
		return usageError(" UC is not supported in librdmacm")
	}
	p.CommRDMACM = true
	return nil
}
