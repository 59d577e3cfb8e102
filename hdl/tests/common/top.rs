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
