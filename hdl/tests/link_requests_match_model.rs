//! The whole switch's LINK registers ask its links for what weft-model's `CsrWindow` asks.
//!
//! A random sequence of CSR accesses goes to the RTL top (`SwitchTop`) and
//! to a `CsrWindow` over a model switch of as many ports: writes of each
//! port's LINK register with any bits (HOT_RESET, RETRAIN, both, neither,
//! and bits outside the fields), reads of it, writes of the port's
//! neighbouring COMPLETER_ID register, and idle cycles. The model's
//! answer is the list of link requests the switch holds for the links
//! (`Switch::take_link_requests`) after each access; the RTL's is the
//! ports' `link_hot_reset` and `link_retrain` pulses in the cycle after the
//! access's clock edge. They must agree access for access, so every
//! request acts exactly once and in the cycle after its write, and every
//! read must answer what the model answers (LINK is write-only: 0).

use proptest::prelude::*;
use weft_hdl::csr;
use weft_hdl::driver::on_big_stack;
use weft_hdl::driver::CycleDriver;
use weft_hdl::top::SwitchTop;
use weft_model::csr_window::CsrWindow;
use weft_model::{PortIndex, Switch};
use weft_regs::csr::port;
use weft_regs::driver::CsrBus;
use weft_regs::tables::LinkRequest;

/// Payload bits and ports of the top: small, for debug-build speed.
const W: usize = 128;
const PORTS: usize = 4;
/// Cases, and accesses per case.
const CASES: u32 = 8;
const ACCESSES: usize = 48;

type Top = SwitchTop<W, PORTS>;

/// One CSR access, or an idle cycle.
#[derive(Clone, Copy, Debug)]
enum Access {
    WriteLink { port: u32, value: u32 },
    ReadLink { port: u32 },
    WriteCompleter { port: u32, value: u32 },
    Idle,
}

fn access() -> impl Strategy<Value = Access> {
    let port = 0..PORTS as u32;
    // The fields' bits mostly, with any other bits set now and then.
    let link_value = (0u32..4, prop::bool::weighted(0.2), any::<u32>())
        .prop_map(|(fields, noisy, noise)| if noisy { fields | noise } else { fields });
    prop_oneof![
        6 => (port.clone(), link_value).prop_map(|(port, value)| Access::WriteLink { port, value }),
        2 => port.clone().prop_map(|port| Access::ReadLink { port }),
        1 => (port, any::<u32>()).prop_map(|(port, value)| Access::WriteCompleter { port, value }),
        2 => Just(Access::Idle),
    ]
}

/// The link requests the top's outputs show in the current cycle, by port.
fn pulses(top: &Top) -> Vec<(PortIndex, LinkRequest)> {
    let mut out = Vec::new();
    for p in 0..PORTS {
        let port = PortIndex(p as u8);
        if top.link_hot_reset[p].val() {
            out.push((port, LinkRequest::HotReset));
        }
        if top.link_retrain[p].val() {
            out.push((port, LinkRequest::Retrain));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: CASES, ..ProptestConfig::default() })]

    #[test]
    fn link_writes_pulse_the_links_as_the_model_asks_them(
        accesses in prop::collection::vec(access(), ACCESSES),
    ) {
        on_big_stack(move || -> Result<(), TestCaseError> {
            let mut rtl = CycleDriver::new(Top::default(), |b| &mut b.clock).expect("well formed");
            let mut model = CsrWindow::new(Switch::new(PORTS));
            rtl.settle().expect("settles");
            prop_assert!(pulses(rtl.block()).is_empty(), "no request out of reset");
            for (k, access) in accesses.iter().enumerate() {
                match *access {
                    Access::WriteLink { port: p, value } => {
                        let address = port::LINK.address(p, 0);
                        csr::write(&mut rtl, |b| &mut b.csr, address, value).expect("settles");
                        model.write32(address, value);
                    }
                    Access::WriteCompleter { port: p, value } => {
                        let address = port::COMPLETER_ID.address(p, 0);
                        csr::write(&mut rtl, |b| &mut b.csr, address, value).expect("settles");
                        model.write32(address, value);
                    }
                    Access::ReadLink { port: p } => {
                        let address = port::LINK.address(p, 0);
                        let got = csr::read(&mut rtl, |b| &mut b.csr, address).expect("settles");
                        prop_assert_eq!(got, Some(model.read32(address)), "access {}: read of port {}'s LINK", k, p);
                    }
                    Access::Idle => rtl.tick().expect("settles"),
                }
                rtl.settle().expect("settles");
                let asked = model.switch_mut().take_link_requests();
                prop_assert_eq!(pulses(rtl.block()), asked, "access {}: {:?}", k, access);
            }
            // The last request's pulse ends after its one cycle.
            rtl.tick().expect("settles");
            rtl.settle().expect("settles");
            prop_assert!(pulses(rtl.block()).is_empty(), "a request outlived its cycle");
            Ok(())
        })?;
    }
}
