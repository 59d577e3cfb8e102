//! An endpoint port facing a conventional switch whose downstream ports
//! redirect peer traffic upstream (ACS, PCIe Base 6.0 §6.12.1.1) returns
//! that traffic out of itself, and isolation holds whatever the bindings:
//! for random owners of the functions below the port, random host-tagged
//! peer windows and random requests and completions, what leaves by the
//! ingress port is worked out here from the rules alone, by scanning the
//! windows as the rules say, and compared with what the switch does.

use proptest::prelude::*;
use weft_model::switch::aperture_base;
use weft_model::*;
use weft_pcie::tlp::*;
use weft_pcie::Bdf;

/// Host `h`'s port is port `h`; the conventional switch is below port 2.
const BELOW: PortIndex = PortIndex(2);
/// The functions below the conventional switch, one per downstream port.
const FUNCTIONS: [Bdf; 4] = [
    Bdf::new(3, 0, 0),
    Bdf::new(4, 0, 0),
    Bdf::new(5, 0, 0),
    Bdf::new(6, 0, 0),
];
/// Each function's BAR in the fabric, 1 MiB apart; all of them below port 2.
const BAR_FABRIC: u64 = 0x40_0000_0000;
const BAR_SIZE: u64 = 1 << 20;
/// Where hosts put the BARs they assigned: 1 MiB slots from here.
const HOST_BARS: u64 = 0x9000_0000;

fn proxy(host: u16) -> Bdf {
    Bdf::new(0xf0 + host as u8, 0, 0)
}

/// One peer window: host `host` put function `function`'s BAR at host slot `slot`.
#[derive(Clone, Copy, Debug)]
struct PeerWindow {
    host: u16,
    function: usize,
    slot: u64,
}

impl PeerWindow {
    fn window(&self) -> Window {
        Window {
            base: HOST_BARS + self.slot * BAR_SIZE,
            size: BAR_SIZE,
            fabric_base: BAR_FABRIC + self.function as u64 * BAR_SIZE,
            permissions: Permissions::READ_WRITE,
        }
    }
}

/// The fabric: host ports 0 and 1, the conventional switch's port 2 with
/// `owners[i]` owning function i (`None`: unbound) and `windows` as its
/// peer windows, returning peer traffic when `returns`.
fn switch(owners: &[Option<u16>; 4], windows: &[PeerWindow], returns: bool) -> Switch {
    let mut switch = Switch::new(3);
    for host in 0..2u16 {
        switch
            .set_port(
                PortIndex(host as u8),
                PortTables {
                    role: PortRole::Host {
                        host: HostIndex(host),
                        proxy_id: proxy(host),
                    },
                    ..PortTables::default()
                },
            )
            .expect("within capacity");
    }
    let function_owners = FUNCTIONS
        .iter()
        .zip(owners)
        .filter_map(|(&function, owner)| {
            owner.map(|host| FunctionOwner {
                function,
                owner: Owner {
                    host: HostIndex(host),
                    proxy_id: proxy(host),
                },
                p2p_request_redirect: false,
                intx_swizzle: 0,
            })
        })
        .collect();
    switch
        .set_port(
            BELOW,
            PortTables {
                role: PortRole::Endpoint {
                    owner: None,
                    buses: (2, 6),
                },
                windows: windows.iter().map(PeerWindow::window).collect(),
                window_owners: windows.iter().map(|w| Some(HostIndex(w.host))).collect(),
                function_owners,
                completer_id: Bdf::new(1, 0, 0),
                return_to_ingress: returns,
                ..PortTables::default()
            },
        )
        .expect("within capacity");
    let mut routes = RouteTables {
        addresses: vec![AddressRoute {
            base: BAR_FABRIC,
            size: FUNCTIONS.len() as u64 * BAR_SIZE,
            to: Destination::Port(BELOW),
        }],
        ..RouteTables::default()
    };
    for host in 0..2u16 {
        routes.addresses.push(AddressRoute {
            base: aperture_base(HostIndex(host)),
            size: 1 << 52,
            to: Destination::Port(PortIndex(host as u8)),
        });
        routes.buses[usize::from(proxy(host).bus())] =
            Some(Destination::Port(PortIndex(host as u8)));
    }
    for bus in 2..=6 {
        routes.buses[bus] = Some(Destination::Port(BELOW));
    }
    switch.set_routes(routes).expect("within capacity");
    switch
}

fn wire(header: Header, payload: &[u8]) -> Vec<u8> {
    Packet::new(header, payload.to_vec())
        .to_bytes()
        .expect("a valid TLP")
}

fn request(op: MemoryOp, requester: Bdf, address: u64) -> Vec<u8> {
    let header = Header {
        digest_present: false,
        poisoned: false,
        body: Body::Memory(MemoryRequest {
            op,
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            address_type: AddressType::default(),
            requester,
            tag: Tag::new(1).expect("fits"),
            address,
            length_dw: 1,
            first_be: 0xf,
            last_be: 0,
            processing_hint: None,
        }),
    };
    let payload = if op == MemoryOp::Write {
        vec![0xa5; 4]
    } else {
        Vec::new()
    };
    wire(header, &payload)
}

fn completion(completer: Bdf, requester: Bdf) -> Vec<u8> {
    let header = Header {
        digest_present: false,
        poisoned: false,
        body: Body::Completion(Completion {
            locked: false,
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            completer,
            status: CompletionStatus::Successful,
            byte_count_modified: false,
            byte_count: 4,
            requester,
            tag: Tag::new(1).expect("fits"),
            lower_address: 0,
            data_dw: Some(1),
        }),
    };
    wire(header, &[0x5a; 4])
}

/// The fabric address of the memory request sent back out of the ingress
/// port, if one was (an error completion for a refused read goes there too).
fn returned_request(out: &Forwarding) -> Option<u64> {
    out.deliveries
        .iter()
        .filter(|d| d.to == Destination::Port(BELOW))
        .find_map(|d| match d.packet.header.body {
            Body::Memory(m) => Some(m.address),
            _ => None,
        })
}

fn peer_window() -> impl Strategy<Value = PeerWindow> {
    (0u16..2, 0..FUNCTIONS.len(), 0u64..6).prop_map(|(host, function, slot)| PeerWindow {
        host,
        function,
        slot,
    })
}

proptest! {
    #[test]
    fn a_request_returns_only_through_a_window_of_its_requesters_owner(
        owners in proptest::array::uniform4(proptest::option::of(0u16..2)),
        windows in proptest::collection::vec(peer_window(), 0..6),
        returns in any::<bool>(),
        requester in 0..FUNCTIONS.len(),
        write in any::<bool>(),
        slot in 0u64..7,
        offset in (0u64..BAR_SIZE / 4).prop_map(|dw| dw * 4),
    ) {
        let mut switch = switch(&owners, &windows, returns);
        let op = if write { MemoryOp::Write } else { MemoryOp::Read };
        let address = HOST_BARS + slot * BAR_SIZE + offset;
        let out = switch
            .ingress(BELOW, &request(op, FUNCTIONS[requester], address))
            .expect("port exists");
        // The rule: the first of the owner's windows the DW touches
        // translates it; only then does it route back below the port.
        let peer = owners[requester].and_then(|host| {
            windows
                .iter()
                .filter(|w| w.host == host)
                .map(PeerWindow::window)
                .find(|w| w.overlaps(address, 4))
                .map(|w| w.fabric_base + (address - w.base))
        });
        let expected = peer.filter(|_| returns);
        prop_assert_eq!(returned_request(&out), expected, "{:#?}", out);
        if peer.is_some() && !returns {
            prop_assert_eq!(out.dropped, Some(DropReason::RoutesToIngress));
        }
        let counters = switch.counters(BELOW).expect("port");
        prop_assert_eq!(
            counters.egress.posted + counters.egress.non_posted,
            u64::from(expected.is_some()),
            "a returned request is the port's egress"
        );
    }

    #[test]
    fn a_completion_returns_only_between_functions_of_one_owner(
        owners in proptest::array::uniform4(proptest::option::of(0u16..2)),
        returns in any::<bool>(),
        completer in 0..FUNCTIONS.len(),
        requester in 0..FUNCTIONS.len(),
    ) {
        let mut switch = switch(&owners, &[], returns);
        let out = switch
            .ingress(BELOW, &completion(FUNCTIONS[completer], FUNCTIONS[requester]))
            .expect("port exists");
        let one_owner =
            owners[requester].is_some() && owners[requester] == owners[completer];
        if returns && one_owner {
            prop_assert_eq!(out.dropped, None);
            prop_assert_eq!(out.deliveries.len(), 1);
            prop_assert_eq!(out.deliveries[0].to, Destination::Port(BELOW));
            prop_assert_eq!(out.deliveries[0].packet.header.requester(), FUNCTIONS[requester]);
        } else {
            prop_assert_eq!(out.dropped, Some(DropReason::RoutesToIngress));
            prop_assert!(out.deliveries.is_empty(), "a completion is never answered");
        }
    }
}
