//! The RTL's CSR programming agrees with weft-model's `CsrWindow`, the
//! register map's reference.
//!
//! One random sequence of CSR accesses goes, word for word, to the RTL
//! blocks that answer the soft core's CSR window (an endpoint port's
//! ingress stage with its peer windows and function owners, the mailbox,
//! the injector: every access is offered to all of them, as on the shared
//! bus, and at most one may answer) and to a `CsrWindow` over a model
//! switch whose port 0 is that endpoint port: whole window entries with
//! owner tags and function owner entries, single raw register writes with
//! bits outside the fields, TLPs arriving for the CPU between mailbox pops
//! and LOST clears, TLPs injected, the mailbox's and the injector's
//! interrupt enables written and the injector's drop flags cleared. After
//! every access the registers touched must read back alike, the mailbox's
//! head and the injected TLPs must agree, and so must the data plane's
//! interrupt line (the OR of the mailbox's and the injector's) and both
//! blocks' `INT_PENDING`; at the end every window and function owner register reads
//! back alike, and random TLPs from the endpoint get the same translation
//! decision (header, destination, drop reason) from the RTL stage as from
//! the model switch the CSR writes programmed.

mod common;

use common::endpoint::{
    function_owner as function_owner_entry, model_outcome, new_stage, offer, offered, peer_window,
    port_config, rtl_outcome, PeerWindow, PortConfig, Stage, PORT,
};
use common::tlp::{window_entry, window_registers};
use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::csr;
use weft_hdl::driver::on_big_stack;
use weft_hdl::driver::CycleDriver;
use weft_hdl::management::{Inject, Mailbox};
use weft_model::csr_window::CsrWindow;
use weft_model::{
    AddressRoute, Destination, FunctionOwner, PortIndex, PortRole, PortTables, RouteTables, Switch,
    Window,
};
use weft_regs::csr::{function_owner, inject, inject_data, mailbox, mailbox_data, port, window};
use weft_regs::driver::CsrBus;
use weft_regs::{capacity, Register};

/// Accesses per case.
const ACCESSES: usize = 24;
/// TLPs offered per case after the programming.
const TLPS: usize = 32;

/// The RTL blocks on the CSR bus.
struct Rtl {
    stage: CycleDriver<Stage>,
    mailbox: CycleDriver<Mailbox>,
    inject: CycleDriver<Inject>,
}

impl Rtl {
    fn new() -> Self {
        let mut inject =
            CycleDriver::new(Inject::default(), |b| &mut b.clock).expect("well formed");
        inject.block().ready.next = true;
        Rtl {
            stage: new_stage(),
            mailbox: CycleDriver::new(Mailbox::default(), |b| &mut b.clock).expect("well formed"),
            inject,
        }
    }
}

impl CsrBus for Rtl {
    fn write32(&mut self, address: u32, value: u32) {
        csr::write(&mut self.stage, |b| &mut b.csr, address, value).expect("settles");
        csr::write(&mut self.mailbox, |b| &mut b.csr, address, value).expect("settles");
        csr::write(&mut self.inject, |b| &mut b.csr, address, value).expect("settles");
    }

    /// The one answer to a read; 0 if no block answers.
    fn read32(&mut self, address: u32) -> u32 {
        let answers = [
            csr::read(&mut self.stage, |b| &mut b.csr, address).expect("settles"),
            csr::read(&mut self.mailbox, |b| &mut b.csr, address).expect("settles"),
            csr::read(&mut self.inject, |b| &mut b.csr, address).expect("settles"),
        ];
        let answered: Vec<u32> = answers.into_iter().flatten().collect();
        assert!(
            answered.len() <= 1,
            "{address:#x} answered by several blocks"
        );
        answered.first().copied().unwrap_or(0)
    }
}

/// A TLP's bytes as wire-order DWs.
fn dwords(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|chunk| u32::from_be_bytes(chunk.try_into().expect("TLPs are whole DWs")))
        .collect()
}

/// One step of the random sequence.
#[derive(Clone, Debug)]
enum Access {
    /// A whole window entry, owner tag before CONTROL.
    Window(u32, PeerWindow),
    /// One raw write to a window register.
    WindowRegister(u32, usize, u32),
    /// A whole function owner entry, CONTROL last.
    Function(u32, (bool, FunctionOwner)),
    /// One raw write to a function owner register.
    FunctionRegister(u32, usize, u32),
    /// A TLP of this many payload DWs for the CPU arrives on a port.
    ForCpu(u8, u16),
    /// POP.DONE.
    Pop,
    /// STATUS.LOST cleared.
    ClearLost,
    /// A TLP injected out of a port: a window entry's request, as a TLP.
    Inject(u32, u16),
    /// A raw write to the mailbox's (`true`) or the injector's INT_ENABLE.
    InterruptEnable(bool, u32),
    /// A raw write to the injector's STATUS: its drop flags cleared, or not.
    ClearDropped(u32),
}

fn entry_index(entries: usize) -> impl Strategy<Value = u32> {
    0..entries as u32
}

fn access() -> impl Strategy<Value = Access> {
    let windows = capacity::WINDOWS_PER_PORT;
    let functions = capacity::FUNCTION_OWNERS_PER_PORT;
    prop_oneof![
        4 => (entry_index(windows), peer_window()).prop_map(|(e, w)| Access::Window(e, w)),
        2 => (entry_index(windows), 0..window::BLOCK.registers.len(), any::<u32>())
            .prop_map(|(e, r, v)| Access::WindowRegister(e, r, v)),
        3 => (entry_index(functions), function_owner_entry()).prop_map(|(e, f)| Access::Function(e, f)),
        2 => (entry_index(functions), 0..function_owner::BLOCK.registers.len(), any::<u32>())
            .prop_map(|(e, r, v)| Access::FunctionRegister(e, r, v)),
        2 => (0u8..capacity::PORTS as u8, prop_oneof![0u16..8, 58u16..64]).prop_map(|(p, n)| Access::ForCpu(p, n)),
        2 => Just(Access::Pop),
        1 => Just(Access::ClearLost),
        1 => (0u32..capacity::PORTS as u32 + 2, 0u16..8).prop_map(|(p, n)| Access::Inject(p, n)),
        2 => (any::<bool>(), prop_oneof![Just(0u32), Just(1), any::<u32>()])
            .prop_map(|(m, v)| Access::InterruptEnable(m, v)),
        1 => prop_oneof![Just(0u32), 0u32..8, any::<u32>()].prop_map(Access::ClearDropped),
    ]
}

/// A memory write of `data_dw` DWs (a 4 DW header), a TLP for the CPU or to inject.
fn memory_write(data_dw: u16, seed: u32) -> Vec<u8> {
    let length = u32::from(data_dw.max(1));
    let mut words = vec![
        0x6000_0000 | length,
        0x0100_00ff | (seed & 0xff) << 8,
        // Above 4 GiB (a 4 DW header, §2.2.4.1) and 4 KiB aligned, so no
        // length crosses a 4 KiB boundary (§2.2.7).
        (seed >> 8) | 1,
        (seed << 12) & 0xffff_f000,
    ];
    if length == 1 {
        words[1] = 0x0100_000f | (seed & 0xff) << 8;
    }
    words.extend((0..length).map(|n| seed.rotate_left(n)));
    words.iter().flat_map(|dw| dw.to_be_bytes()).collect()
}

/// The port registers of `config`, written as the firmware writes them (CONTROL last).
fn port_registers(config: &PortConfig) -> [(Register, u32); 3] {
    let owner = config.owner.map_or(0, |owner| {
        port::OWNER_BOUND.encode(1)
            | port::OWNER_HOST_INDEX.encode(owner.host.0.into())
            | port::OWNER_PROXY_ID.encode(owner.proxy_id.0.into())
    });
    let control = port::ENABLE.encode(config.enabled.into())
        | port::ROLE.encode(port::ROLE_ENDPOINT)
        | port::P2P_REQUEST_REDIRECT.encode(config.p2p_request_redirect.into())
        | port::INTX_SWIZZLE.encode(config.intx_swizzle.into());
    [
        (port::OWNER, owner),
        (
            port::BUSES,
            port::BUSES_FIRST.encode(config.buses.0.into())
                | port::BUSES_LAST.encode(config.buses.1.into()),
        ),
        (port::CONTROL, control),
    ]
}

/// The endpoint stage's port inputs, taken from the port registers' words
/// by the register map's fields (the port block's RTL is elsewhere).
fn drive_port_inputs(
    stage: &mut Stage,
    [(_, owner), (_, buses), (_, control)]: [(Register, u32); 3],
) {
    stage.enabled.next =
        port::ENABLE.decode(control) == 1 && port::ROLE.decode(control) == port::ROLE_ENDPOINT;
    stage.bound.next = port::OWNER_BOUND.decode(owner) == 1;
    stage.owner_host.next = port::OWNER_HOST_INDEX.decode(owner).to_bits();
    stage.owner_proxy_id.next = port::OWNER_PROXY_ID.decode(owner).to_bits();
    stage.bus_first.next = port::BUSES_FIRST.decode(buses).to_bits();
    stage.bus_last.next = port::BUSES_LAST.decode(buses).to_bits();
    stage.p2p_request_redirect.next = port::P2P_REQUEST_REDIRECT.decode(control) == 1;
    stage.intx_swizzle.next = (port::INTX_SWIZZLE.decode(control) % 4).to_bits();
}

/// A model switch whose port 1 is a fabric port every route leads to;
/// port 0 is left for the CSR writes to make an endpoint port.
fn model() -> CsrWindow {
    let mut switch = Switch::new(capacity::PORTS);
    let fabric = PortTables {
        role: PortRole::Fabric,
        ..PortTables::default()
    };
    switch
        .set_port(PortIndex(1), fabric)
        .expect("within capacity");
    let mut routes = RouteTables {
        addresses: vec![AddressRoute {
            base: 0,
            size: u64::MAX,
            to: Destination::Port(PortIndex(1)),
        }],
        ..RouteTables::default()
    };
    routes.buses = [Some(Destination::Port(PortIndex(1))); capacity::BUS_ROUTES];
    switch.set_routes(routes).expect("within capacity");
    CsrWindow::new(switch)
}

/// Reads `address` from both; they must agree.
fn same_read(rtl: &mut Rtl, model: &mut CsrWindow, address: u32) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        rtl.read32(address),
        model.read32(address),
        "read of {:#x}",
        address
    );
    Ok(())
}

/// Both write `value` at `address`.
fn both_write(rtl: &mut Rtl, model: &mut CsrWindow, address: u32, value: u32) {
    rtl.write32(address, value);
    model.write32(address, value);
}

/// The data plane's interrupt line (the OR of the mailbox's and the
/// injector's) and both blocks' INT_PENDING, as both show them.
fn same_interrupt(rtl: &mut Rtl, model: &mut CsrWindow) -> Result<(), TestCaseError> {
    rtl.mailbox.settle().expect("settles");
    rtl.inject.settle().expect("settles");
    let line = rtl.mailbox.block().irq.val() || rtl.inject.block().irq.val();
    prop_assert_eq!(line, model.interrupt(), "the interrupt line");
    same_read(rtl, model, mailbox::INT_PENDING.address(0, 0))?;
    same_read(rtl, model, inject::INT_PENDING.address(0, 0))?;
    Ok(())
}

/// The mailbox's head as both show it: STATUS and every DW.
fn same_mailbox_head(rtl: &mut Rtl, model: &mut CsrWindow) -> Result<(), TestCaseError> {
    same_read(rtl, model, mailbox::STATUS.address(0, 0))?;
    let status = model.read32(mailbox::STATUS.address(0, 0));
    let shown = (mailbox::DWORDS.decode(status) + 1).min(mailbox::TLP_DWORDS);
    for n in 0..shown {
        same_read(rtl, model, mailbox_data::DATA.address(0, n))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn csr_programming_gives_the_models_read_backs_and_decisions(
        config in port_config(),
        accesses in prop::collection::vec(access(), ACCESSES),
        base_windows in prop::collection::vec(window_entry(), 2),
        offers in prop::collection::vec(offer(), TLPS),
    ) {
        on_big_stack(move || -> Result<(), TestCaseError> {
            let mut rtl = Rtl::new();
            let mut model = model();
            let ports = port_registers(&config);
            for (register, value) in ports {
                both_write(&mut rtl, &mut model, register.address(PORT, 0), value);
            }
            drive_port_inputs(rtl.stage.block(), ports);
            let mut ranges: Vec<(bool, Window)> = base_windows.clone();
            let mut functions = config.functions.clone();
            let mut seed = 0x5eed_u32;
            for access in &accesses {
                seed = seed.wrapping_mul(0x9e37_79b9).wrapping_add(1);
                match access {
                    Access::Window(entry, (window, tag)) => {
                        for (register, value) in window_registers(window, *tag) {
                            let address = register.address(PORT, *entry);
                            both_write(&mut rtl, &mut model, address, value);
                            same_read(&mut rtl, &mut model, address)?;
                        }
                        ranges.push(*window);
                    }
                    Access::WindowRegister(entry, register, value) => {
                        let address = window::BLOCK.registers[*register].address(PORT, *entry);
                        both_write(&mut rtl, &mut model, address, *value);
                        same_read(&mut rtl, &mut model, address)?;
                    }
                    Access::Function(entry, (valid, f)) => {
                        let control = function_owner::VALID.encode((*valid).into())
                            | function_owner::P2P_REQUEST_REDIRECT.encode(f.p2p_request_redirect.into())
                            | function_owner::INTX_SWIZZLE.encode(f.intx_swizzle.into());
                        let owner = function_owner::HOST_INDEX.encode(f.owner.host.0.into())
                            | function_owner::PROXY_ID.encode(f.owner.proxy_id.0.into());
                        for (register, value) in [
                            (function_owner::FUNCTION, u32::from(f.function.0)),
                            (function_owner::OWNER, owner),
                            (function_owner::CONTROL, control),
                        ] {
                            let address = register.address(PORT, *entry);
                            both_write(&mut rtl, &mut model, address, value);
                            same_read(&mut rtl, &mut model, address)?;
                        }
                        functions.push((*valid, *f));
                    }
                    Access::FunctionRegister(entry, register, value) => {
                        let address =
                            function_owner::BLOCK.registers[*register].address(PORT, *entry);
                        both_write(&mut rtl, &mut model, address, *value);
                        same_read(&mut rtl, &mut model, address)?;
                    }
                    Access::ForCpu(from, data_dw) => {
                        let bytes = memory_write(*data_dw, seed);
                        model.queue_for_cpu(PortIndex(*from), &bytes);
                        let words = dwords(&bytes);
                        for (n, dw) in words.iter().enumerate() {
                            let block = rtl.mailbox.block();
                            block.push.next = true;
                            block.push_first.next = n == 0;
                            block.push_last.next = n + 1 == words.len();
                            block.push_dw.next = dw.to_bits();
                            block.push_port.next = u32::from(*from).to_bits();
                            rtl.mailbox.tick().expect("settles");
                        }
                        rtl.mailbox.block().push.next = false;
                        same_mailbox_head(&mut rtl, &mut model)?;
                    }
                    Access::Pop => {
                        both_write(&mut rtl, &mut model, mailbox::POP.address(0, 0), mailbox::DONE.encode(1));
                        same_mailbox_head(&mut rtl, &mut model)?;
                    }
                    Access::ClearLost => {
                        both_write(&mut rtl, &mut model, mailbox::STATUS.address(0, 0), mailbox::LOST.mask());
                        same_mailbox_head(&mut rtl, &mut model)?;
                    }
                    Access::Inject(to, data_dw) => {
                        let words = dwords(&memory_write(*data_dw, seed));
                        for (n, dw) in words.iter().enumerate() {
                            both_write(&mut rtl, &mut model, inject_data::DATA.address(0, n as u32), *dw);
                        }
                        let send = inject::PORT.encode(*to) | inject::DWORDS.encode(words.len() as u32);
                        both_write(&mut rtl, &mut model, inject::SEND.address(0, 0), send);
                        let expected: Vec<(u32, Vec<u32>)> = model
                            .take_injected()
                            .into_iter()
                            .map(|d| {
                                let Destination::Port(out) = d.to else { panic!("out of a port") };
                                (u32::from(out.0), dwords(&d.packet.to_bytes().expect("legal")))
                            })
                            .collect();
                        let mut sent: Vec<(u32, Vec<u32>, bool)> = Vec::new();
                        rtl.inject.settle().expect("settles");
                        while rtl.inject.block().valid.val() {
                            let block = rtl.inject.block();
                            let out = block.port.val().to_u32();
                            let dw = block.dw.val().to_u32();
                            let last = block.last.val();
                            match sent.last_mut() {
                                Some((port, words, false)) if *port == out => words.push(dw),
                                _ => sent.push((out, vec![dw], false)),
                            }
                            if last {
                                sent.last_mut().expect("pushed").2 = true;
                            }
                            rtl.inject.tick().expect("settles");
                        }
                        let sent: Vec<(u32, Vec<u32>)> =
                            sent.into_iter().map(|(port, words, _)| (port, words)).collect();
                        prop_assert_eq!(sent, expected);
                        same_read(&mut rtl, &mut model, inject::STATUS.address(0, 0))?;
                    }
                    Access::InterruptEnable(for_mailbox, value) => {
                        let register = if *for_mailbox { mailbox::INT_ENABLE } else { inject::INT_ENABLE };
                        both_write(&mut rtl, &mut model, register.address(0, 0), *value);
                        same_read(&mut rtl, &mut model, register.address(0, 0))?;
                    }
                    Access::ClearDropped(value) => {
                        both_write(&mut rtl, &mut model, inject::STATUS.address(0, 0), *value);
                        same_read(&mut rtl, &mut model, inject::STATUS.address(0, 0))?;
                    }
                }
                same_interrupt(&mut rtl, &mut model)?;
            }
            // Every window and function owner register of the port.
            for register in window::BLOCK.registers {
                for entry in 0..window::LAYOUT.entries {
                    same_read(&mut rtl, &mut model, register.address(PORT, entry))?;
                }
            }
            for register in function_owner::BLOCK.registers {
                for entry in 0..function_owner::LAYOUT.entries {
                    same_read(&mut rtl, &mut model, register.address(PORT, entry))?;
                }
            }
            // Translation decisions, from the second cycle after the last write.
            rtl.stage.run(2).expect("settles");
            let config = PortConfig { functions, ..config.clone() };
            let mut compared = 0;
            for offer in &offers {
                let Some((bytes, dws)) = offered(&config, &ranges, offer) else {
                    continue;
                };
                let expected = model_outcome(model.switch(), &bytes);
                prop_assert_eq!(rtl_outcome(&mut rtl.stage, dws), expected, "{:?}", offer);
                compared += 1;
            }
            prop_assert!(compared >= TLPS / 2, "only {} of {} TLPs were legal", compared, TLPS);
            prop_assert!(model.stray_accesses().is_empty(), "{:x?}", model.stray_accesses());
            Ok(())
        })?;
    }
}
