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
	switch p.Conn {
	case UC:
		return usageError(" UC is not supported in librdmacm")
	case UD:
		// perftest connects UD QPs through RDMA-CM's UDP port space, that is with SIDR.
		return usageError("-R with -c UD is not supported by gorxe: it needs SIDR (RDMA-CM's UDP port space)")
	}
	p.CommRDMACM = true
	return nil
}
