//! The data plane's CSR window (`weft_regs::csr`) on the ISS bus: a
//! weft-model [`CsrWindow`] over a model switch, mapped at
//! [`CSR_BASE`], so the firmware drives a modelled switch's tables,
//! mailbox and injector as it drives the RTL's.
//!
//! Like the SoC models ([`crate::soc`]), [`DataPlaneWindow`] is a handle:
//! clones share one window, so the embedder maps one clone
//! ([`DataPlaneWindow::attach`]) and keeps another to offer the switch
//! TLPs and to inspect its tables. The configuration requests the firmware
//! sends through the injector cross their links at once: the embedder's
//! [`Links`] answer them as the function on each port's link
//! ([`CsrWindow::answer_injected_config`]), and their completions wait in
//! the mailbox by the firmware's next access.
//!
//! The window's interrupt line ([`DataPlaneWindow::interrupt_pending`]:
//! the mailbox's and the injector's, level-sensitive) is for the embedder
//! to OR into `mip.MEIP` with the MAC's (`Soc::drive_interrupts_with`).
//!
//! Accesses are whole words, as the window's registers are; any other
//! width is [`DeviceFault::UnsupportedWidth`]. Offsets without a register
//! read 0 and ignore writes, as the window model does (it records them,
//! [`CsrWindow::stray_accesses`]).

use std::cell::{RefCell, RefMut};
use std::rc::Rc;

use weft_model::csr_window::CsrWindow;
use weft_model::isolation::error_completion;
use weft_model::{Packet, PortIndex, Switch};
use weft_pcie::tlp::CompletionStatus;
use weft_pcie::Bdf;
use weft_regs::csr::{CSR_BASE, CSR_SIZE};
use weft_regs::driver::CsrBus;

use crate::bus::{DeviceFault, HarvardBus, MapError, Mmio, Width};

/// The functions on the switch ports' links, as the embedder models them:
/// the completion of the configuration request `packet` sent out of
/// `port`, or `None` if nothing answers it.
pub type Links = Box<dyn FnMut(PortIndex, &Packet) -> Option<Packet>>;

struct State {
    window: CsrWindow,
    links: Links,
}

/// The CSR window of a model switch, as an ISS device.
#[derive(Clone)]
pub struct DataPlaneWindow {
    state: Rc<RefCell<State>>,
}

impl DataPlaneWindow {
    /// `window`, with `links` answering the configuration requests sent
    /// out of its ports.
    pub fn new(window: CsrWindow, links: Links) -> Self {
        DataPlaneWindow {
            state: Rc::new(RefCell::new(State { window, links })),
        }
    }

    /// The window of a switch of `ports` ports whose links are all down:
    /// a downstream port completes a configuration request for its link
    /// with Unsupported Request while the link is down (PCIe Base 6.0
    /// §2.9.1). The board the firmware boots on when nothing else is attached.
    pub fn unlinked(ports: usize) -> Self {
        let links: Links = Box::new(|_, packet| {
            error_completion(
                &packet.header,
                Bdf::default(),
                CompletionStatus::UnsupportedRequest,
            )
        });
        DataPlaneWindow::new(CsrWindow::new(Switch::new(ports)), links)
    }

    /// Maps a clone of this window on `bus` at [`CSR_BASE`].
    pub fn attach(&self, bus: &mut HarvardBus) -> Result<(), MapError> {
        bus.map_mmio(CSR_BASE, CSR_SIZE, Box::new(self.clone()))
    }

    /// The data plane's interrupt line ([`CsrWindow::interrupt`]), which
    /// joins the MAC's on `mip.MEIP` (`Soc::drive_interrupts_with`).
    pub fn interrupt_pending(&self) -> bool {
        self.state.borrow().window.interrupt()
    }

    /// The window, to offer its switch TLPs or read its tables.
    ///
    /// # Panics
    ///
    /// If the window is borrowed already (a borrow held across a step of the hart).
    pub fn window(&self) -> RefMut<'_, CsrWindow> {
        RefMut::map(self.state.borrow_mut(), |state| &mut state.window)
    }
}

impl Mmio for DataPlaneWindow {
    fn read(&mut self, offset: u32, width: Width) -> Result<u32, DeviceFault> {
        if width != Width::Word {
            return Err(DeviceFault::UnsupportedWidth);
        }
        Ok(self.state.borrow_mut().window.read32(CSR_BASE + offset))
    }

    fn write(&mut self, offset: u32, width: Width, value: u32) -> Result<(), DeviceFault> {
        if width != Width::Word {
            return Err(DeviceFault::UnsupportedWidth);
        }
        let state = &mut *self.state.borrow_mut();
        state.window.write32(CSR_BASE + offset, value);
        state.window.answer_injected_config(&mut state.links);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use weft_regs::csr::{global, mailbox};

    use super::*;
    use crate::{encode as e, Hart, Step};

    #[test]
    fn the_firmware_reads_the_identity_registers_at_the_maps_address() {
        let mut bus = HarvardBus::reference();
        let window = DataPlaneWindow::new(CsrWindow::new(Switch::new(4)), Box::new(|_, _| None));
        window.attach(&mut bus).expect("the CSR window is free");
        let mut hart = Hart::new(bus);
        let id = global::ID.address(0, 0);
        let ports = global::PORTS.address(0, 0);
        // x1 = CSR_BASE; x2 = ID; x3 = PORTS
        let program = [
            e::lui(1, id >> 12),
            e::lw(2, 1, 0),
            e::lw(3, 1, (ports - id) as i32),
        ];
        hart.bus_mut()
            .write_words(0, &program)
            .expect("instruction RAM is at 0");
        for _ in 0..program.len() {
            assert!(matches!(hart.step(), Step::Retired(r) if r.trap.is_none()));
        }
        assert_eq!(hart.reg(2), global::ID_VALUE);
        assert_eq!(global::PORT_COUNT.decode(hart.reg(3)), 4);
        assert!(window.window().stray_accesses().is_empty());
    }

    #[test]
    fn a_tlp_in_the_mailbox_wakes_the_hart_through_meip_once_enabled() {
        let mut bus = HarvardBus::reference();
        let soc = crate::soc::Soc::attach(&mut bus).expect("the SoC window is free");
        let window = DataPlaneWindow::new(CsrWindow::new(Switch::new(4)), Box::new(|_, _| None));
        window.attach(&mut bus).expect("the CSR window is free");
        // x3 = mie.MEIE (bit 11, Privileged 20211203 §3.1.9) = 0x1000 >> 1;
        // enable it, wait, then mark the wake in x4.
        let program = [
            e::lui(3, 1),
            e::srli(3, 3, 1),
            e::csrrs(0, 0x304, 3),
            e::wfi(),
            e::addi(4, 0, 1),
        ];
        let mut hart = Hart::new(bus);
        hart.bus_mut()
            .write_words(0, &program)
            .expect("instruction RAM is at 0");
        let step = |hart: &mut Hart<HarvardBus>| {
            soc.drive_interrupts_with(hart, window.interrupt_pending());
            hart.step()
        };
        for _ in 0..program.len() + 2 {
            step(&mut hart);
        }
        window.window().queue_for_cpu(PortIndex(1), &[0; 12]);
        assert_eq!(step(&mut hart), Step::Idle, "INT_ENABLE is 0 at reset");
        window.window().write32(
            mailbox::INT_ENABLE.address(0, 0),
            mailbox::ON_PENDING.mask(),
        );
        assert!(window.interrupt_pending());
        step(&mut hart);
        assert_eq!(hart.reg(4), 1, "woken by the mailbox on mip.MEIP");
    }
}
