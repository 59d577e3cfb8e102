//! The endpoint ingress stage's test harness: port configurations, TLP
//! offers, and outcomes of the RTL stage and of weft-model, shared by the
//! endpoint ingress and CSR programming differential tests.

use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::csr::{self, CsrTarget};
use weft_hdl::driver::CycleDriver;
use weft_hdl::translate::{EndpointIngress, IngressDestination};
use weft_model::{Destination, FunctionOwner, HostIndex, Owner, Packet, PortIndex, Switch, Window};
use weft_pcie::tlp::{Body, Completion, CompletionStatus, Header, Tag, TrafficClass};
use weft_pcie::Bdf;
use weft_regs::aperture::MAX_HOSTS;
use weft_regs::capacity;
use weft_regs::csr::function_owner;

use super::tlp::{
    attributes, header_bytes, header_dws, packet, reason_code, window_entry, wire_header, Common,
    Request,
};

/// The endpoint port's index.
pub const PORT: u32 = 0;
/// The endpoint ingress stage in its reference size.
pub type Stage = EndpointIngress<{ capacity::WINDOWS_PER_PORT }>;

/// The endpoint port's registers.
#[derive(Clone, Debug)]
pub struct PortConfig {
    /// CONTROL.ENABLE with role endpoint.
    pub enabled: bool,
    /// OWNER, if BOUND.
    pub owner: Option<Owner>,
    /// BUSES: first and last.
    pub buses: (u8, u8),
    /// CONTROL.P2P_REQUEST_REDIRECT.
    pub p2p_request_redirect: bool,
    /// CONTROL.INTX_SWIZZLE.
    pub intx_swizzle: u8,
    /// Function owner entries and whether each is valid.
    pub functions: Vec<(bool, FunctionOwner)>,
}

/// A host among a few, so that owners and window tags meet.
pub fn few_hosts() -> impl Strategy<Value = u16> {
    prop_oneof![4 => 0u16..3, 1 => 0..MAX_HOSTS as u16]
}

/// A function owner entry and whether it is valid.
pub fn function_owner() -> impl Strategy<Value = (bool, FunctionOwner)> {
    (
        prop::bool::weighted(0.8),
        any::<u16>(),
        few_hosts(),
        any::<u16>(),
        any::<bool>(),
        0u8..32,
    )
        .prop_map(|(valid, function, host, proxy, redirect, swizzle)| {
            (
                valid,
                FunctionOwner {
                    function: Bdf(function),
                    owner: Owner {
                        host: HostIndex(host),
                        proxy_id: Bdf(proxy),
                    },
                    p2p_request_redirect: redirect,
                    intx_swizzle: swizzle,
                },
            )
        })
}

/// The endpoint port's registers.
pub fn port_config() -> impl Strategy<Value = PortConfig> {
    (
        prop::bool::weighted(0.9),
        prop::option::weighted(
            0.85,
            (
                prop_oneof![4 => few_hosts(), 1 => Just(MAX_HOSTS as u16 - 1)],
                any::<u16>(),
            ),
        ),
        any::<(u8, u8)>(),
        prop::bool::weighted(0.25),
        0u8..32,
        prop::collection::vec(function_owner(), capacity::FUNCTION_OWNERS_PER_PORT),
    )
        .prop_map(
            |(enabled, owner, (a, b), p2p_request_redirect, intx_swizzle, functions)| PortConfig {
                enabled,
                owner: owner.map(|(host, proxy)| Owner {
                    host: HostIndex(host),
                    proxy_id: Bdf(proxy),
                }),
                buses: (a.min(b), a.max(b)),
                p2p_request_redirect,
                intx_swizzle,
                functions,
            },
        )
}

/// A requester bus inside the port's range most of the time, or any bus.
pub fn requester_bus() -> impl Strategy<Value = (bool, u8)> {
    (prop::bool::weighted(0.85), any::<u8>())
}

/// A peer window entry: valid, the window, and its owner tag.
pub type PeerWindow = ((bool, Window), Option<u16>);

/// A peer window entry with its owner tag.
pub fn peer_window() -> impl Strategy<Value = PeerWindow> {
    (window_entry(), prop::option::weighted(0.4, few_hosts()))
}

/// What happened to a TLP.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Forwarded with this header; also copied to the CPU.
    Forward(Vec<u8>, bool),
    /// To the CPU with this header.
    Cpu(Vec<u8>),
    /// A completion passed on with this header.
    Completion(Vec<u8>),
    /// Dropped for this reason.
    Drop(u32),
}

/// What the model switch does with a TLP arriving at port 0.
pub fn model_outcome(switch: &Switch, bytes: &[u8]) -> Outcome {
    let forwarding = switch
        .clone()
        .ingress(PortIndex(0), bytes)
        .expect("the port exists");
    if let Some(reason) = forwarding.dropped {
        return Outcome::Drop(reason_code(reason));
    }
    let first = &forwarding.deliveries[0];
    let header = wire_header(
        &first
            .packet
            .to_bytes()
            .expect("the model forwards legal TLPs"),
    );
    match first.to {
        Destination::Cpu => Outcome::Cpu(header),
        Destination::Port(port) => {
            assert_eq!(port, PortIndex(1), "every route leads to port 1");
            if first.packet.completion().is_some() {
                return Outcome::Completion(header);
            }
            let copied = forwarding.deliveries[1..]
                .iter()
                .any(|d| d.to == Destination::Cpu && d.packet == first.packet);
            Outcome::Forward(header, copied)
        }
    }
}

/// The stage's CSR target.
pub fn rtl_csr(stage: &mut Stage) -> &mut CsrTarget {
    &mut stage.csr
}

/// Programs the function owners over the bus and sets the port's register inputs.
pub fn configure(driver: &mut CycleDriver<Stage>, config: &PortConfig) {
    for (entry, (valid, f)) in config.functions.iter().enumerate() {
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
            csr::write(driver, rtl_csr, register.address(PORT, entry as u32), value)
                .expect("the stage settles");
        }
    }
    let stage = driver.block();
    stage.enabled.next = config.enabled;
    stage.bound.next = config.owner.is_some();
    let owner = config.owner.unwrap_or(Owner {
        host: HostIndex(0),
        proxy_id: Bdf(0),
    });
    stage.owner_host.next = u32::from(owner.host.0).to_bits();
    stage.owner_proxy_id.next = u32::from(owner.proxy_id.0).to_bits();
    stage.bus_first.next = u32::from(config.buses.0).to_bits();
    stage.bus_last.next = u32::from(config.buses.1).to_bits();
    stage.p2p_request_redirect.next = config.p2p_request_redirect;
    stage.intx_swizzle.next = u32::from(config.intx_swizzle % 4).to_bits();
}

/// What the RTL stage does with a header.
pub fn rtl_outcome(driver: &mut CycleDriver<Stage>, dws: [u32; 4]) -> Outcome {
    let stage = driver.block();
    stage.valid.next = true;
    stage.dw0.next = dws[0].to_bits();
    stage.dw1.next = dws[1].to_bits();
    stage.dw2.next = dws[2].to_bits();
    stage.dw3.next = dws[3].to_bits();
    // The answer follows one clock edge later.
    driver.tick().expect("the stage settles");
    let stage = driver.block();
    assert!(stage.answer_valid.val());
    let out = [
        &stage.header_dw0,
        &stage.header_dw1,
        &stage.header_dw2,
        &stage.header_dw3,
    ]
    .map(|s| s.val().to_u32());
    let destination = IngressDestination::from_code(stage.destination.val().to_u32())
        .expect("a defined destination code");
    match destination {
        IngressDestination::Forward => Outcome::Forward(header_bytes(out), stage.copy_to_cpu.val()),
        IngressDestination::Cpu => Outcome::Cpu(header_bytes(out)),
        IngressDestination::Completion => Outcome::Completion(header_bytes(out)),
        IngressDestination::Drop => Outcome::Drop(stage.drop_reason.val().to_u32()),
    }
}

/// The stage of port [`PORT`], reset.
pub fn new_stage() -> CycleDriver<Stage> {
    CycleDriver::new(Stage::new(PORT), |b| &mut b.clock).expect("the stage is well formed")
}

/// A completion an endpoint sends back to whoever read from it.
pub fn completion(common: &Common) -> Packet {
    let completion = Completion {
        locked: false,
        traffic_class: TrafficClass::from_bits(common.traffic_class),
        attributes: attributes(common.attributes),
        completer: Bdf(common.requester),
        status: CompletionStatus::Successful,
        byte_count_modified: false,
        byte_count: 4,
        requester: Bdf(common.requester.rotate_left(8)),
        tag: Tag::new(common.tag).expect("drawn within 10 bits"),
        lower_address: 0,
        data_dw: Some(1),
    };
    let header = Header {
        digest_present: false,
        poisoned: false,
        body: Body::Completion(completion),
    };
    let mut packet = Packet::new(header, vec![0xa5; 4]);
    packet.digest = common.digest;
    packet
}

/// One TLP offered at the endpoint port: a request (or a completion), its
/// common fields, a requester bus (inside the port's range?), and a
/// function owner entry whose function sends it.
pub type Offer = (Request, Common, (bool, u8), bool, Option<usize>);

/// TLPs offered at the endpoint port.
pub fn offer() -> impl Strategy<Value = Offer> {
    (
        super::tlp::request(),
        super::tlp::common(),
        requester_bus(),
        prop::bool::weighted(0.1),
        prop::option::weighted(0.4, any::<usize>()),
    )
}

/// The TLP `offer` stands for at a port configured as `config` with
/// peer windows `ranges`, and its header as the side bus carries it; `None`
/// if the drawn fields make no legal TLP.
pub fn offered(
    config: &PortConfig,
    ranges: &[(bool, Window)],
    (request, common, (inside, bus), is_completion, function): &Offer,
) -> Option<(Vec<u8>, [u32; 4])> {
    let (first, last) = config.buses;
    let bus = if *inside {
        first + (bus % (last - first).saturating_add(1).max(1))
    } else {
        *bus
    };
    let requester = match function {
        Some(f) if !config.functions.is_empty() => {
            config.functions[f % config.functions.len()].1.function.0
        }
        _ => u16::from(bus) << 8 | (common.requester & 0xff),
    };
    let common = Common {
        requester,
        ..common.clone()
    };
    let packet = if *is_completion {
        Some(completion(&common))
    } else {
        packet(request, &common, ranges)
    }?;
    let bytes = packet.to_bytes().expect("checked when built");
    let dws = header_dws(&bytes, common.beyond_header);
    Some((bytes, dws))
}
