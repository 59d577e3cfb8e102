//! Every capacity of the fabric manager, named once.
//!
//! The manager allocates nothing: each list is a fixed-capacity
//! `heapless` container of one of these sizes, and running out is a typed
//! error, never a panic. The data plane's own table sizes are
//! `weft_regs::capacity`.

/// Functions (physical and virtual) the fabric inventory holds. With these
/// limits the manager's state is 39 KiB on the soft core (`cargo xtask
/// fabric-size`).
pub const MAX_FUNCTIONS: usize = 128;

/// Host ports, each with its own virtual switch.
pub const MAX_HOST_PORTS: usize = 4;

/// Virtual downstream ports (slots) of one virtual switch.
pub const MAX_SLOTS_PER_HOST: usize = 8;

/// Conventional switch ports and bridges below endpoint ports (a switch
/// with an upstream port and seven downstream ports).
pub const MAX_BRIDGES: usize = 8;

/// Functions of one ARI device: the Next Function Number is 8 bits (PCIe Base 6.0 §7.8.7.2).
pub const MAX_ARI_FUNCTIONS: usize = 256;

/// Weft switches in the fabric, the manager's own included (the reference
/// fabric has four; the simulator's sweep goes to sixteen).
pub const MAX_SWITCHES: usize = 16;

/// Events the event log holds: the newest this many, 24 bytes each
/// (enough for enumerating the reference fabric's functions and a burst
/// of binds and errors between two reads by the management CPU).
pub const EVENT_LOG_CAPACITY: usize = 64;

/// Finished background operations whose outcome the manager remembers for
/// polling, unbinds and NumVFs changes alike (two hosts' worth of slots
/// unbound at once).
pub const FINISHED_OPERATIONS: usize = 16;

/// SR-IOV PFs whose NumVFs changed at run time that the settings (and so
/// a saved configuration) keep apart from the fabric-wide NumVFs.
pub const MAX_SRIOV_PFS: usize = 8;
