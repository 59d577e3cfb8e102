//! The whole switch's RTL (`SwitchTop`) behind the firmware's CSR bus.

use weft_hdl::csr;
use weft_hdl::driver::CycleDriver;
use weft_hdl::top::SwitchTop;
use weft_regs::driver::CsrBus;

/// A `SwitchTop` that the firmware's driver (`weft_regs::driver::CsrDataPlane`) programs and reads.
pub struct TopBus<const W: usize, const N: usize>(pub CycleDriver<SwitchTop<W, N>>);

impl<const W: usize, const N: usize> CsrBus for TopBus<W, N> {
    fn write32(&mut self, address: u32, value: u32) {
        csr::write(&mut self.0, |b| &mut b.csr, address, value).expect("the switch settles");
    }

    fn read32(&mut self, address: u32) -> u32 {
        csr::read(&mut self.0, |b| &mut b.csr, address)
            .expect("the switch settles")
            .unwrap_or(0)
    }
}

/// What the CPU finds in the mailbox when it empties it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mailboxed {
    /// STATUS.LOST: some TLP for the CPU did not fit.
    pub lost: bool,
    /// The queued TLPs, oldest first: (STATUS.PORT, the DWs of `mailbox_data`).
    pub tlps: Vec<(u32, Vec<u32>)>,
}

impl Mailboxed {
    /// The TLPs that arrived on `port`, in order.
    pub fn arrived_on(&self, port: u32) -> Vec<Vec<u32>> {
        self.tlps
            .iter()
            .filter(|(from, _)| *from == port)
            .map(|(_, dws)| dws.clone())
            .collect()
    }
}

/// Empties the mailbox as the firmware does, over the register map
/// (`weft_regs::csr::{mailbox, mailbox_data}`): while STATUS.PENDING, read
/// the head's DWORDS DWs and write POP.DONE.
pub fn empty_mailbox(bus: &mut impl CsrBus) -> Mailboxed {
    use weft_regs::csr::{mailbox, mailbox_data};
    let mut found = Mailboxed::default();
    loop {
        let status = bus.read32(mailbox::STATUS.address(0, 0));
        found.lost |= mailbox::LOST.decode(status) == 1;
        if mailbox::PENDING.decode(status) == 0 {
            return found;
        }
        let dws = (0..mailbox::DWORDS.decode(status))
            .map(|n| bus.read32(mailbox_data::DATA.address(0, n)))
            .collect();
        found.tlps.push((mailbox::PORT.decode(status), dws));
        bus.write32(mailbox::POP.address(0, 0), mailbox::DONE.encode(1));
    }
}

/// Sends the TLP `tlp` (wire bytes) out of `port` through the injector,
/// as the firmware does: its DWs into `inject_data`, then SEND.
pub fn inject(bus: &mut impl CsrBus, port: u32, tlp: &[u8]) {
    use weft_regs::csr::{inject, inject_data};
    for (n, dw) in tlp.chunks(4).enumerate() {
        let dw = u32::from_be_bytes(dw.try_into().expect("whole DWs"));
        bus.write32(inject_data::DATA.address(0, n as u32), dw);
    }
    let send = inject::PORT.encode(port) | inject::DWORDS.encode(tlp.len() as u32 / 4);
    bus.write32(inject::SEND.address(0, 0), send);
}
