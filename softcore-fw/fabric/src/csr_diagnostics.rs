//! Raw access to the data plane's CSR window (`weft_regs::csr`), for
//! diagnostics: one 32-bit read or write at a 4-byte aligned address, as
//! the window takes them.
//!
//! An address must decode to a register of the register map, on a port
//! the switch has ([`weft_regs::csr::locate`], which takes none of the
//! map's text into the firmware's data RAM); any other address of the
//! window or outside it is refused rather than read as 0, so a typo does
//! not pass for a register that reads 0. Reads have no side effects in
//! the map (the mailbox's POP and the injector's SEND are write-only), so
//! every register may be read.
//!
//! A write is allowed only where it cannot undo what the fabric manager
//! or the firmware programmed and keeps ([`writable`]): the one such
//! block is `counter_control`, clearing a port's counters as
//! `ClearCounters` does. The tables (port roles and switches, windows,
//! function owners, ID maps, routes) are the manager's, written from its
//! inventory and bindings; the mailbox and the injector are the
//! firmware's queues of configuration requests; `global` and the counters
//! are read-only. Writes to any of them are refused before anything is
//! written.

use weft_regs::csr::{self, counter_control, Located};

use crate::board::{Board, BoardFault};

/// Why a CSR access was refused or failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsrError {
    /// The address is not a multiple of 4: the window takes whole words only.
    Misaligned {
        /// The address given.
        address: u32,
    },
    /// No register of the map is at the address, or it belongs to a port
    /// the switch does not have.
    NoSuchRegister {
        /// The address given.
        address: u32,
    },
    /// The register is the fabric manager's or the firmware's (see the
    /// module docs): nothing was written.
    FabricOwned {
        /// The address given.
        address: u32,
    },
    /// The board cannot carry out the access.
    Board(BoardFault),
}

/// The register at `address`, checked to be aligned, in the map and on
/// one of the switch's `ports`.
pub fn register_at(address: u32, ports: usize) -> Result<Located, CsrError> {
    if !address.is_multiple_of(4) {
        return Err(CsrError::Misaligned { address });
    }
    let located = csr::locate(address).ok_or(CsrError::NoSuchRegister { address })?;
    let per_port = located.layout.instances > 1;
    if per_port && located.instance as usize >= ports {
        return Err(CsrError::NoSuchRegister { address });
    }
    Ok(located)
}

/// Whether a diagnostic write may reach `register`: only the counters'
/// clear, which changes nothing the fabric manager keeps.
pub fn writable(register: &Located) -> bool {
    register.layout == counter_control::BLOCK.layout
}

/// Reads the CSR at `address` of a switch with `ports` ports.
pub fn read<B: Board + ?Sized>(board: &mut B, ports: usize, address: u32) -> Result<u32, CsrError> {
    register_at(address, ports)?;
    board.read_csr(address).map_err(CsrError::Board)
}

/// Writes `value` to the CSR at `address` of a switch with `ports`
/// ports, unless the register is the fabric's ([`writable`]).
pub fn write<B: Board + ?Sized>(
    board: &mut B,
    ports: usize,
    address: u32,
    value: u32,
) -> Result<(), CsrError> {
    let register = register_at(address, ports)?;
    if !writable(&register) {
        return Err(CsrError::FabricOwned { address });
    }
    board.write_csr(address, value).map_err(CsrError::Board)
}

#[cfg(test)]
mod tests {
    use weft_regs::csr::{address_route, counter, global, inject, mailbox, port, window, CSR_BASE};

    use super::*;

    #[test]
    fn only_the_counter_clear_is_writable() {
        let clear = register_at(counter_control::CLEAR.address(0, 0), 8).expect("a register");
        assert!(writable(&clear));
        for owned in [
            port::CONTROL.address(1, 0),
            window::BASE_LOW.address(2, 3),
            address_route::DESTINATION.address(0, 5),
            mailbox::POP.address(0, 0),
            inject::SEND.address(0, 0),
            global::ID.address(0, 0),
            counter::VALUE_LOW.address(0, 0),
        ] {
            let register = register_at(owned, 8).expect("a register");
            assert!(!writable(&register), "{owned:#x} is not the diagnostics'");
        }
    }

    #[test]
    fn addresses_off_the_map_are_refused() {
        assert_eq!(
            register_at(CSR_BASE + 2, 8),
            Err(CsrError::Misaligned {
                address: CSR_BASE + 2
            })
        );
        // Past the last register of global, and a port the switch lacks.
        for address in [CSR_BASE + 0x80, port::CONTROL.address(4, 0), 0x1000_0000] {
            assert_eq!(
                register_at(address, 4),
                Err(CsrError::NoSuchRegister { address })
            );
        }
    }
}
