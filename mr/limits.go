package mr

import "math"

// Device limits of this implementation, laid out like the corresponding ibv_device_attr fields so the
// device can report them directly. They follow Linux rxe's defaults.
const (
	// MaxMRSize is ibv_device_attr.max_mr_size.
	MaxMRSize uint64 = math.MaxUint64
	// PageSizeCap is ibv_device_attr.page_size_cap: every power of two from 4 KiB to 2 GiB.
	PageSizeCap uint64 = 0xfffff000
	// DefaultPageSize is the page size of user registrations outside a huge-page Buffer.
	DefaultPageSize = 4096
	// MinPageSize and MaxPageSize bound the page sizes a page table may use.
	MinPageSize = 4096
	MaxPageSize = 1 << 31
	// MaxFastRegPageListLen is ibv_device_attr.max_fast_reg_page_list_len.
	MaxFastRegPageListLen = 512

	// MinMRIndex..MaxMRIndex is the key index range of memory regions (index 0 is never used, so no
	// valid key is below 0x100).
	MinMRIndex uint32 = 1
	MaxMRIndex uint32 = 1 << 19
	// MinMWIndex..MaxMWIndex is the key index range of memory windows.
	MinMWIndex uint32 = 1<<19 + 1
	MaxMWIndex uint32 = 1 << 20
	// MaxMR and MaxMW are ibv_device_attr.max_mr and max_mw.
	MaxMR = int(MaxMRIndex - MinMRIndex + 1)
	MaxMW = int(MaxMWIndex - MinMWIndex + 1)
	// MaxPD is ibv_device_attr.max_pd.
	MaxPD = 1 << 20
)
