package layers

import (
	"github.com/gopacket/gopacket"

	"github.com/gorxe/gorxe/packet"
)

// The extension header layers. Each holds the decoded values of one header,
// as the matching packet Fields struct, whose view type in the packet package
// carries the IBTA field diagram. Contents is the header, Payload what follows
// it up to the pad.

// RDETH is the Reliable Datagram Extended Transport Header layer, carried only by RD packets, which no RoCE stack sends. See packet.RDETH for the field diagram.
type RDETH struct {
	extBase
	packet.RDETHFields
}

// LayerType returns LayerTypeRDETH.
func (l *RDETH) LayerType() gopacket.LayerType { return LayerTypeRDETH }

// CanDecode returns LayerTypeRDETH.
func (l *RDETH) CanDecode() gopacket.LayerClass { return LayerTypeRDETH }

// DecodeFromBytes decodes the RDETH at the start of data.
func (l *RDETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	l.RDETHFields = packet.RDETHFields{}
	b, err := l.decode(packet.HeaderRDETH, data, df)
	if err != nil {
		return err
	}
	l.RDETHFields = packet.RDETH(b).Fields()
	return nil
}

// SerializeTo prepends the RDETH to b.
func (l *RDETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(packet.RDETHSize)
	if err != nil {
		return err
	}
	packet.RDETH(buf).Encode(&l.RDETHFields)
	return nil
}

// DETH is the Datagram Extended Transport Header layer, carried by every UD packet: the Q_Key and the sender's QP. See packet.DETH for the field diagram.
type DETH struct {
	extBase
	packet.DETHFields
}

// LayerType returns LayerTypeDETH.
func (l *DETH) LayerType() gopacket.LayerType { return LayerTypeDETH }

// CanDecode returns LayerTypeDETH.
func (l *DETH) CanDecode() gopacket.LayerClass { return LayerTypeDETH }

// DecodeFromBytes decodes the DETH at the start of data.
func (l *DETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	l.DETHFields = packet.DETHFields{}
	b, err := l.decode(packet.HeaderDETH, data, df)
	if err != nil {
		return err
	}
	l.DETHFields = packet.DETH(b).Fields()
	return nil
}

// SerializeTo prepends the DETH to b.
func (l *DETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(packet.DETHSize)
	if err != nil {
		return err
	}
	packet.DETH(buf).Encode(&l.DETHFields)
	return nil
}

// FETH is the Flush Extended Transport Header layer, carried by FLUSH before its RETH. See packet.FETH for the field diagram.
type FETH struct {
	extBase
	packet.FETHFields
}

// LayerType returns LayerTypeFETH.
func (l *FETH) LayerType() gopacket.LayerType { return LayerTypeFETH }

// CanDecode returns LayerTypeFETH.
func (l *FETH) CanDecode() gopacket.LayerClass { return LayerTypeFETH }

// DecodeFromBytes decodes the FETH at the start of data.
func (l *FETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	l.FETHFields = packet.FETHFields{}
	b, err := l.decode(packet.HeaderFETH, data, df)
	if err != nil {
		return err
	}
	l.FETHFields = packet.FETH(b).Fields()
	return nil
}

// SerializeTo prepends the FETH to b.
func (l *FETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(packet.FETHSize)
	if err != nil {
		return err
	}
	packet.FETH(buf).Encode(&l.FETHFields)
	return nil
}

// RETH is the RDMA Extended Transport Header layer, carried by the first or only packet of an RDMA WRITE, by an RDMA READ request, FLUSH and ATOMIC_WRITE. See packet.RETH for the field diagram.
type RETH struct {
	extBase
	packet.RETHFields
}

// LayerType returns LayerTypeRETH.
func (l *RETH) LayerType() gopacket.LayerType { return LayerTypeRETH }

// CanDecode returns LayerTypeRETH.
func (l *RETH) CanDecode() gopacket.LayerClass { return LayerTypeRETH }

// DecodeFromBytes decodes the RETH at the start of data.
func (l *RETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	l.RETHFields = packet.RETHFields{}
	b, err := l.decode(packet.HeaderRETH, data, df)
	if err != nil {
		return err
	}
	l.RETHFields = packet.RETH(b).Fields()
	return nil
}

// SerializeTo prepends the RETH to b.
func (l *RETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(packet.RETHSize)
	if err != nil {
		return err
	}
	packet.RETH(buf).Encode(&l.RETHFields)
	return nil
}

// AtomicETH is the Atomic Extended Transport Header layer, carried by COMPARE_SWAP and FETCH_ADD. See packet.AtomicETH for the field diagram.
type AtomicETH struct {
	extBase
	packet.AtomicETHFields
}

// LayerType returns LayerTypeAtomicETH.
func (l *AtomicETH) LayerType() gopacket.LayerType { return LayerTypeAtomicETH }

// CanDecode returns LayerTypeAtomicETH.
func (l *AtomicETH) CanDecode() gopacket.LayerClass { return LayerTypeAtomicETH }

// DecodeFromBytes decodes the AtomicETH at the start of data.
func (l *AtomicETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	l.AtomicETHFields = packet.AtomicETHFields{}
	b, err := l.decode(packet.HeaderAtomicETH, data, df)
	if err != nil {
		return err
	}
	l.AtomicETHFields = packet.AtomicETH(b).Fields()
	return nil
}

// SerializeTo prepends the AtomicETH to b.
func (l *AtomicETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(packet.AtomicETHSize)
	if err != nil {
		return err
	}
	packet.AtomicETH(buf).Encode(&l.AtomicETHFields)
	return nil
}

// AETH is the ACK Extended Transport Header layer, carried by acknowledgements and by the first, last and only RDMA READ responses. See packet.AETH for the field diagram.
type AETH struct {
	extBase
	packet.AETHFields
}

// LayerType returns LayerTypeAETH.
func (l *AETH) LayerType() gopacket.LayerType { return LayerTypeAETH }

// CanDecode returns LayerTypeAETH.
func (l *AETH) CanDecode() gopacket.LayerClass { return LayerTypeAETH }

// DecodeFromBytes decodes the AETH at the start of data.
func (l *AETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	l.AETHFields = packet.AETHFields{}
	b, err := l.decode(packet.HeaderAETH, data, df)
	if err != nil {
		return err
	}
	l.AETHFields = packet.AETH(b).Fields()
	return nil
}

// SerializeTo prepends the AETH to b.
func (l *AETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(packet.AETHSize)
	if err != nil {
		return err
	}
	packet.AETH(buf).Encode(&l.AETHFields)
	return nil
}

// AtomicAckETH is the Atomic Acknowledge Extended Transport Header layer, carried by ATOMIC_ACKNOWLEDGE after its AETH. See packet.AtomicAckETH for the field diagram.
type AtomicAckETH struct {
	extBase
	packet.AtomicAckETHFields
}

// LayerType returns LayerTypeAtomicAckETH.
func (l *AtomicAckETH) LayerType() gopacket.LayerType { return LayerTypeAtomicAckETH }

// CanDecode returns LayerTypeAtomicAckETH.
func (l *AtomicAckETH) CanDecode() gopacket.LayerClass { return LayerTypeAtomicAckETH }

// DecodeFromBytes decodes the AtomicAckETH at the start of data.
func (l *AtomicAckETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	l.AtomicAckETHFields = packet.AtomicAckETHFields{}
	b, err := l.decode(packet.HeaderAtomicAckETH, data, df)
	if err != nil {
		return err
	}
	l.AtomicAckETHFields = packet.AtomicAckETH(b).Fields()
	return nil
}

// SerializeTo prepends the AtomicAckETH to b.
func (l *AtomicAckETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(packet.AtomicAckETHSize)
	if err != nil {
		return err
	}
	packet.AtomicAckETH(buf).Encode(&l.AtomicAckETHFields)
	return nil
}

// ImmDt is the Immediate Data Extended Transport Header layer, carried by the last or only packet of an operation with immediate data. See packet.ImmDt for the field diagram.
type ImmDt struct {
	extBase
	packet.ImmDtFields
}

// LayerType returns LayerTypeImmDt.
func (l *ImmDt) LayerType() gopacket.LayerType { return LayerTypeImmDt }

// CanDecode returns LayerTypeImmDt.
func (l *ImmDt) CanDecode() gopacket.LayerClass { return LayerTypeImmDt }

// DecodeFromBytes decodes the ImmDt at the start of data.
func (l *ImmDt) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	l.ImmDtFields = packet.ImmDtFields{}
	b, err := l.decode(packet.HeaderImmDt, data, df)
	if err != nil {
		return err
	}
	l.ImmDtFields = packet.ImmDt(b).Fields()
	return nil
}

// SerializeTo prepends the ImmDt to b.
func (l *ImmDt) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(packet.ImmDtSize)
	if err != nil {
		return err
	}
	packet.ImmDt(buf).Encode(&l.ImmDtFields)
	return nil
}

// IETH is the Invalidate Extended Transport Header layer, carried by the last or only packet of a SEND with Invalidate. See packet.IETH for the field diagram.
type IETH struct {
	extBase
	packet.IETHFields
}

// LayerType returns LayerTypeIETH.
func (l *IETH) LayerType() gopacket.LayerType { return LayerTypeIETH }

// CanDecode returns LayerTypeIETH.
func (l *IETH) CanDecode() gopacket.LayerClass { return LayerTypeIETH }

// DecodeFromBytes decodes the IETH at the start of data.
func (l *IETH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	l.IETHFields = packet.IETHFields{}
	b, err := l.decode(packet.HeaderIETH, data, df)
	if err != nil {
		return err
	}
	l.IETHFields = packet.IETH(b).Fields()
	return nil
}

// SerializeTo prepends the IETH to b.
func (l *IETH) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	buf, err := b.PrependBytes(packet.IETHSize)
	if err != nil {
		return err
	}
	packet.IETH(buf).Encode(&l.IETHFields)
	return nil
}
