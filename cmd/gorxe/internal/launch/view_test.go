package launch

import (
	"net/netip"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gorxe/gorxe"
)

// TestDeviceFiles: a device's files read as rxe's sysfs attributes read, with a gids file for
// every index of the table (the empty ones the zero GID) and the attributes of the populated
// entries only.
func TestDeviceFiles(t *testing.T) {
	a4 := netip.MustParseAddr("192.0.2.2")
	d := viewDevice{
		name:   "gorxe_eth0",
		netdev: "eth0",
		attr:   gorxe.DeviceAttr{FwVer: "0.0.0", NodeGUID: 0x02fcfffffe000001, SysImageGUID: 0x02fcfffffe000001},
		port: gorxe.PortAttr{State: gorxe.PortActive, PhysState: 5, LinkLayer: gorxe.LinkLayerEthernet, GIDTblLen: 4,
			PortCapFlags: gorxe.PortCMSup, ActiveWidth: 2, ActiveSpeed: 32},
		gids: []gorxe.GIDEntry{
			{Index: 0, GID: gorxe.GIDFromAddr(netip.MustParseAddr("fe80::fc:ff:fe00:1")), Type: gorxe.GIDTypeRoCEv2, NetDev: "eth0"},
			{Index: 1, GID: gorxe.GIDFromAddr(a4), Type: gorxe.GIDTypeRoCEv2, NetDev: "eth0"},
		},
		pkeys: []uint16{0xffff},
	}
	got := map[string]viewFile{}
	var order []string
	for _, f := range d.files(2) {
		require.NotContains(t, got, f.Path, "written twice")
		got[f.Path] = f
		order = append(order, f.Path)
	}
	const dir = "/sys/class/infiniband/gorxe_eth0"
	want := map[string]string{
		dir + "/node_type":                                "1: CA\n",
		dir + "/node_guid":                                "02fc:ffff:fe00:0001\n",
		dir + "/sys_image_guid":                           "02fc:ffff:fe00:0001\n",
		dir + "/fw_ver":                                   "0.0.0\n",
		dir + "/parent":                                   "eth0\n",
		dir + "/ports/1/state":                            "4: ACTIVE\n",
		dir + "/ports/1/phys_state":                       "5: LinkUp\n",
		dir + "/ports/1/link_layer":                       "Ethernet\n",
		dir + "/ports/1/lid":                              "0x0\n",
		dir + "/ports/1/sm_lid":                           "0x0\n",
		dir + "/ports/1/lid_mask_count":                   "0\n",
		dir + "/ports/1/sm_sl":                            "0\n",
		dir + "/ports/1/cap_mask":                         "0x00010000\n",
		dir + "/ports/1/rate":                             "100 Gb/sec (4X EDR)\n",
		dir + "/ports/1/pkeys/0":                          "0xffff\n",
		dir + "/ports/1/gids/0":                           "fe80:0000:0000:0000:00fc:00ff:fe00:0001\n",
		dir + "/ports/1/gids/1":                           "0000:0000:0000:0000:0000:ffff:c000:0202\n",
		dir + "/ports/1/gids/2":                           "0000:0000:0000:0000:0000:0000:0000:0000\n",
		dir + "/ports/1/gids/3":                           "0000:0000:0000:0000:0000:0000:0000:0000\n",
		dir + "/ports/1/gid_attrs/types/0":                "RoCE v2\n",
		dir + "/ports/1/gid_attrs/types/1":                "RoCE v2\n",
		dir + "/ports/1/gid_attrs/ndevs/0":                "eth0\n",
		dir + "/ports/1/gid_attrs/ndevs/1":                "eth0\n",
		"/sys/class/infiniband_verbs/uverbs2/ibdev":       "gorxe_eth0\n",
		"/sys/class/infiniband_verbs/uverbs2/abi_version": "1\n",
		"/dev/infiniband/uverbs2":                         "",
	}
	for path, data := range want {
		if assert.Contains(t, got, path) {
			assert.Equal(t, data, got[path].Data, path)
			assert.Empty(t, got[path].Link, path)
		}
	}
	assert.Equal(t, viewFile{Path: dir + "/device/net/eth0", Link: "/sys/class/net/eth0"}, got[dir+"/device/net/eth0"])
	assert.True(t, got["/dev/infiniband/uverbs2"].Char, "uverbs2 is a character device")
	assert.False(t, got[dir+"/node_type"].Char)
	assert.Equal(t, uint32(0o444), got[dir+"/node_type"].Mode)
	assert.Len(t, got, len(want)+1, "files: %q", order)
}

// TestRateText: the rate reads as the kernel prints it, lanes times lane speed.
func TestRateText(t *testing.T) {
	for _, tc := range []struct {
		speed, width uint8
		want         string
	}{
		{1, 1, "2.5 Gb/sec (1X)"}, // rxe on a link of unknown speed
		{1, 2, "10 Gb/sec (4X)"},
		{2, 1, "5 Gb/sec (1X DDR)"},
		{4, 2, "40 Gb/sec (4X QDR)"},
		{16, 2, "56 Gb/sec (4X FDR)"},
		{32, 16, "50 Gb/sec (2X EDR)"},
		{128, 4, "800 Gb/sec (8X NDR)"},
		{64, 8, "600 Gb/sec (12X HDR)"},
		{0, 0, "2.5 Gb/sec (1X)"}, // unknown: SDR, 1X
	} {
		assert.Equal(t, tc.want, rateText(tc.speed, tc.width), "speed %d width %d", tc.speed, tc.width)
	}
}

// TestViewFiles: the view holds the device GORXE_ADDR names, with the index the library gives
// it, and the class-wide files.
func TestViewFiles(t *testing.T) {
	files, err := viewFiles(envLookup([]string{"GORXE_ADDR=127.0.0.1"}))
	require.NoError(t, err)
	paths := map[string]string{}
	for _, f := range files {
		paths[f.Path] = f.Data
	}
	assert.Equal(t, "6\n", paths["/sys/class/infiniband_verbs/abi_version"])
	assert.Equal(t, "gorxe_127.0.0.1\n", paths["/sys/class/infiniband_verbs/uverbs0/ibdev"])
	assert.Equal(t, "0000:0000:0000:0000:0000:ffff:7f00:0001\n", paths["/sys/class/infiniband/gorxe_127.0.0.1/ports/1/gids/1"])
	assert.Contains(t, paths, "/dev/infiniband/rdma_cm")
	n := 0
	for i := 0; ; i++ {
		if _, ok := paths["/sys/class/infiniband/gorxe_127.0.0.1/ports/1/gids/"+strconv.Itoa(i)]; !ok {
			break
		}
		n++
	}
	assert.Equal(t, 1024, n, "a gids file per index of rxe's table")

	_, err = viewFiles(envLookup([]string{"GORXE_ADDR=nosuch0"}))
	assert.EqualError(t, err, "GORXE_ADDR: IB device nosuch0 not found: IB device not found")
}
