//! Placing BARs in the global fabric address space.
//!
//! Two pools, both below `weft_regs::aperture::HOST_APERTURE_BASE` so BARs
//! never overlap a host's aperture:
//!
//! - **below 4 GiB**: every 32-bit memory BAR (it cannot hold a higher
//!   address, PCIe Base 6.0 §7.5.1.2.1), and 64-bit BARs that are not
//!   prefetchable, since a bridge forwards non-prefetchable memory only
//!   through its 32-bit Memory Base/Limit window (§7.5.1.3.8) and a
//!   conventional switch may sit below a port;
//! - **64-bit prefetchable**: 64-bit prefetchable BARs, above 4 GiB, the
//!   range a bridge's Prefetchable Base/Limit covers (§7.5.1.3.9).
//!
//! Each BAR is placed at the next address in its pool that is a multiple of
//! its size (natural alignment, §7.5.1.2.1). I/O BARs are not placed: the
//! fabric carries no I/O requests.

use weft_pcie::config::BarKind;
use weft_pcie::tlp::FOUR_GIB;
use weft_regs::aperture::HOST_APERTURE_BASE;

/// Default start of the pool below 4 GiB.
pub const DEFAULT_POOL32_BASE: u64 = 0x8000_0000;
/// Default start of the 64-bit prefetchable pool (256 GiB).
pub const DEFAULT_POOL64_BASE: u64 = 0x40_0000_0000;

/// Which pool a BAR is placed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pool {
    /// Below 4 GiB: 32-bit BARs and non-prefetchable 64-bit BARs.
    Below4GiB,
    /// 64-bit prefetchable BARs.
    Prefetchable64,
}

impl Pool {
    /// The pool a BAR of `kind` goes in; `None` for I/O BARs, which are not placed.
    pub const fn for_kind(kind: BarKind) -> Option<Pool> {
        match kind {
            BarKind::Io => None,
            BarKind::Memory32 { .. }
            | BarKind::Memory64 {
                prefetchable: false,
            } => Some(Pool::Below4GiB),
            BarKind::Memory64 { prefetchable: true } => Some(Pool::Prefetchable64),
        }
    }
}

/// The address ranges BARs are placed in, `base..limit` (limit exclusive).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddressPlan {
    /// The pool below 4 GiB.
    pub below_4gib: (u64, u64),
    /// The 64-bit prefetchable pool.
    pub prefetchable_64: (u64, u64),
}

impl AddressPlan {
    /// The default pools: from [`DEFAULT_POOL32_BASE`] to 4 GiB, and from
    /// [`DEFAULT_POOL64_BASE`] to the host apertures.
    pub const DEFAULT: AddressPlan = AddressPlan {
        below_4gib: (DEFAULT_POOL32_BASE, FOUR_GIB),
        prefetchable_64: (DEFAULT_POOL64_BASE, HOST_APERTURE_BASE),
    };
}

impl Default for AddressPlan {
    fn default() -> Self {
        AddressPlan::DEFAULT
    }
}

/// Why a plan or a placement failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressError {
    /// A pool would reach past where its BARs may be (4 GiB for the lower
    /// pool, the host apertures for the upper).
    PoolOutOfBounds {
        /// The pool.
        pool: Pool,
        /// Its configured end.
        limit: u64,
    },
    /// A pool has no room left for a BAR.
    Exhausted {
        /// The pool.
        pool: Pool,
        /// The region asked for, in bytes.
        size: u64,
    },
    /// A region size that is not a power of two cannot be naturally aligned.
    SizeNotPowerOfTwo {
        /// The size asked for.
        size: u64,
    },
}

/// A bump allocator over the two pools: BARs upwards from each pool's
/// base ([`AddressAllocator::allocate`]), and the weft switches' own
/// management BARs downwards from its end
/// ([`AddressAllocator::allocate_from_top`]), so endpoints are placed
/// alike however many switches the fabric has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddressAllocator {
    plan: AddressPlan,
    next_32: u64,
    next_64: u64,
    top_32: u64,
    top_64: u64,
}

impl AddressAllocator {
    /// An allocator over `plan`, checked to keep each pool where its BARs may go.
    pub fn new(plan: AddressPlan) -> Result<Self, AddressError> {
        if plan.below_4gib.1 > FOUR_GIB {
            return Err(AddressError::PoolOutOfBounds {
                pool: Pool::Below4GiB,
                limit: plan.below_4gib.1,
            });
        }
        if plan.prefetchable_64.1 > HOST_APERTURE_BASE {
            return Err(AddressError::PoolOutOfBounds {
                pool: Pool::Prefetchable64,
                limit: plan.prefetchable_64.1,
            });
        }
        Ok(AddressAllocator {
            plan,
            next_32: plan.below_4gib.0,
            next_64: plan.prefetchable_64.0,
            top_32: plan.below_4gib.1,
            top_64: plan.prefetchable_64.1,
        })
    }

    /// The next free address of `pool`: where its next region would start, unaligned.
    pub const fn cursor(&self, pool: Pool) -> u64 {
        match pool {
            Pool::Below4GiB => self.next_32,
            Pool::Prefetchable64 => self.next_64,
        }
    }

    /// Places a region of `size` bytes (a power of two) aligned to `align`
    /// (a power of two) in `pool`, returning its address.
    pub fn allocate(&mut self, pool: Pool, size: u64, align: u64) -> Result<u64, AddressError> {
        if !align.is_power_of_two() {
            return Err(AddressError::SizeNotPowerOfTwo { size: align });
        }
        let (next, limit) = match pool {
            Pool::Below4GiB => (&mut self.next_32, self.top_32),
            Pool::Prefetchable64 => (&mut self.next_64, self.top_64),
        };
        let exhausted = AddressError::Exhausted { pool, size };
        let base = next
            .checked_add(align - 1)
            .map(|end| end & !(align - 1))
            .ok_or(exhausted)?;
        let end = base.checked_add(size).ok_or(exhausted)?;
        if end > limit {
            return Err(exhausted);
        }
        *next = end;
        Ok(base)
    }

    /// Places a region of `size` bytes (a power of two), aligned to its
    /// size, at the highest free address of `pool`, returning its address.
    pub fn allocate_from_top(&mut self, pool: Pool, size: u64) -> Result<u64, AddressError> {
        if !size.is_power_of_two() {
            return Err(AddressError::SizeNotPowerOfTwo { size });
        }
        let (next, top) = match pool {
            Pool::Below4GiB => (self.next_32, &mut self.top_32),
            Pool::Prefetchable64 => (self.next_64, &mut self.top_64),
        };
        let base = top
            .checked_sub(size)
            .map(|base| base & !(size - 1))
            .filter(|base| *base >= next)
            .ok_or(AddressError::Exhausted { pool, size })?;
        *top = base;
        Ok(base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_region_is_aligned_to_its_own_size() {
        let mut a = AddressAllocator::new(AddressPlan::default()).expect("default plan is valid");
        assert_eq!(a.allocate(Pool::Below4GiB, 0x1000, 0x1000), Ok(0x8000_0000));
        // 1 MiB after a 4 KiB region starts at the next 1 MiB boundary.
        assert_eq!(
            a.allocate(Pool::Below4GiB, 0x10_0000, 0x10_0000),
            Ok(0x8010_0000)
        );
        assert_eq!(
            a.allocate(Pool::Prefetchable64, 1 << 30, 1 << 30),
            Ok(0x40_0000_0000)
        );
    }

    #[test]
    fn regions_from_the_top_go_down_aligned_and_never_meet_the_bottom() {
        let mut a = AddressAllocator::new(AddressPlan {
            below_4gib: (0xffc0_0000, FOUR_GIB),
            prefetchable_64: (DEFAULT_POOL64_BASE, HOST_APERTURE_BASE),
        })
        .expect("valid");
        assert_eq!(
            a.allocate_from_top(Pool::Below4GiB, 0x10_0000),
            Ok(0xfff0_0000)
        );
        assert_eq!(
            a.allocate_from_top(Pool::Below4GiB, 0x10_0000),
            Ok(0xffe0_0000)
        );
        // 2 MiB aligned: below 0xffe0_0000 the next such start is 0xffc0_0000.
        assert_eq!(a.allocate(Pool::Below4GiB, 0x1000, 0x1000), Ok(0xffc0_0000));
        assert_eq!(
            a.allocate_from_top(Pool::Below4GiB, 0x20_0000),
            Err(AddressError::Exhausted {
                pool: Pool::Below4GiB,
                size: 0x20_0000
            })
        );
        // The bottom stops at what the top took.
        assert_eq!(
            a.allocate(Pool::Below4GiB, 0x20_0000, 0x20_0000),
            Err(AddressError::Exhausted {
                pool: Pool::Below4GiB,
                size: 0x20_0000
            })
        );
        assert_eq!(
            a.allocate(Pool::Below4GiB, 0x10_0000, 0x10_0000),
            Ok(0xffd0_0000)
        );
    }

    #[test]
    fn a_full_pool_is_an_error_not_a_wrap() {
        let mut a = AddressAllocator::new(AddressPlan {
            below_4gib: (0xffff_0000, FOUR_GIB),
            prefetchable_64: (DEFAULT_POOL64_BASE, HOST_APERTURE_BASE),
        })
        .expect("valid");
        assert_eq!(
            a.allocate(Pool::Below4GiB, 0x2_0000, 0x2_0000),
            Err(AddressError::Exhausted {
                pool: Pool::Below4GiB,
                size: 0x2_0000
            })
        );
    }

    #[test]
    fn pools_stay_below_their_bounds() {
        let plan = AddressPlan {
            below_4gib: (0x8000_0000, FOUR_GIB + 1),
            ..AddressPlan::default()
        };
        assert!(matches!(
            AddressAllocator::new(plan),
            Err(AddressError::PoolOutOfBounds { .. })
        ));
    }
}
