//! Configuration space and capability structures (PCIe Base 6.0 chapter 7,
//! and §9.3 for SR-IOV).
//!
//! - [`header`], [`cap_id`], [`ext_cap_id`]: register offsets, bit fields and
//!   IDs: the one definition for the firmware, the simulator and the RTL.
//! - [`ConfigSpace`]: a function's 4 KiB space with per-bit RO / RW / RW1C
//!   write semantics.
//! - [`function`]: builders for Type 0 and Type 1 headers; [`bar`]: BAR
//!   layout, sizing and placement.
//! - [`walk`]: robust capability list walkers; [`list`]: appending
//!   capabilities and linking the lists.
//! - One module per capability structure, each with its offsets, bits, a
//!   builder that lays it out, and a handle with typed accessors:
//!   [`pcie_cap`], [`pm`], [`msi`], [`msix`], [`aer`], [`acs`], [`ari`],
//!   [`sriov`], and [`vsec`] for weft's own switch identity.

pub mod bar;
pub mod function;
pub mod header;
mod ids;
pub mod list;
pub mod space;
pub mod walk;

pub use bar::{Bar, BarKind, DecodedBar};
pub use function::{FunctionIdentity, Type0Function, Type1Function};
pub use ids::{cap_id, ext_cap_id};
pub use list::{Capability, CapabilityList, ExtendedCapability};
pub use space::{ConfigRead, ConfigSpace, ConfigWrite};
pub use walk::{Capabilities, ExtendedCapabilities, WalkError};
pub mod pcie_cap;
pub mod msi;
pub mod msix;
pub mod pm;
pub mod acs;
pub mod aer;
pub mod ari;
pub mod sriov;
pub mod vsec;
