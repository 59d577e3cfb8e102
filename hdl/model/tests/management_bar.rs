//! The management BAR is the CSR window: any sequence of whole-DW memory
//! reads and writes arriving on a fabric port inside a switch's management
//! BAR leaves the switch as the same accesses on its CSR bus leave an
//! identical switch, and each read's completion carries what the CSR bus
//! read (PCIe Base 6.0 §2.2.9: a CplD of the one DW read).

use proptest::prelude::*;
use weft_model::csr_window::CsrWindow;
use weft_model::{Destination, Packet, PortIndex, Switch};
use weft_pcie::tlp::{
    AddressType, Attributes, Body, CompletionStatus, Header, MemoryOp, MemoryRequest, Tag,
    TrafficClass,
};
use weft_pcie::Bdf;
use weft_regs::csr::{self, global, port};
use weft_regs::driver::CsrBus;

const PORTS: u32 = 4;
const FABRIC_PORT: PortIndex = PortIndex(1);
const BAR: u64 = 0x1_2340_0000;

/// A switch whose port 1 is a fabric port, its management BAR at [`BAR`].
fn switch() -> CsrWindow {
    let mut csr = CsrWindow::new(Switch::new(PORTS as usize));
    let fabric = port::ENABLE.encode(1) | port::ROLE.encode(port::ROLE_FABRIC);
    csr.write32(port::CONTROL.address(u32::from(FABRIC_PORT.0), 0), fabric);
    let enable = global::MANAGEMENT_ENABLE.encode(1 << FABRIC_PORT.0);
    csr.write32(
        global::MANAGEMENT_BAR_LOW.address(0, 0),
        BAR as u32 | enable,
    );
    csr.write32(
        global::MANAGEMENT_BAR_HIGH.address(0, 0),
        (BAR >> 32) as u32,
    );
    csr
}

/// Every register of the map on the switch's ports, but the management
/// BAR's own and the fabric port's control (which would move the BAR or
/// close the port the accesses come in by), and the counters, which count
/// the in-band requests themselves.
fn registers() -> Vec<u32> {
    let kept = [
        global::MANAGEMENT_BAR_LOW.address(0, 0),
        global::MANAGEMENT_BAR_HIGH.address(0, 0),
        port::CONTROL.address(u32::from(FABRIC_PORT.0), 0),
    ];
    csr::registers(PORTS)
        .filter(|(block, _, address)| {
            block.name != csr::counter::BLOCK.name && !kept.contains(address)
        })
        .map(|(_, _, address)| address)
        .collect()
}

/// A whole-DW memory request from the manager (bus 0) at CSR address `address`.
fn request(address: u32, write: Option<u32>, tag: u8) -> Vec<u8> {
    let header = Header {
        digest_present: false,
        poisoned: false,
        body: Body::Memory(MemoryRequest {
            op: if write.is_some() {
                MemoryOp::Write
            } else {
                MemoryOp::Read
            },
            traffic_class: TrafficClass::default(),
            attributes: Attributes::default(),
            address_type: AddressType::default(),
            requester: Bdf::new(0, 0, 0),
            tag: Tag::from_8bit(tag),
            address: BAR + u64::from(address - csr::CSR_BASE),
            length_dw: 1,
            first_be: 0xf,
            last_be: 0,
            processing_hint: None,
        }),
    };
    let payload = write.map_or(Vec::new(), |value| value.to_le_bytes().to_vec());
    Packet::new(header, payload)
        .to_bytes()
        .expect("a well-formed request")
}

proptest! {
    #[test]
    fn the_management_bar_accesses_the_csr_window_as_the_csr_bus_does(
        accesses in prop::collection::vec(
            (prop::sample::select(registers()), proptest::option::of(any::<u32>())),
            1..40,
        ),
    ) {
        let (mut in_band, mut bus) = (switch(), switch());
        for (n, (address, write)) in accesses.into_iter().enumerate() {
            let tag = n as u8;
            let forwarding = in_band
                .forward(FABRIC_PORT, &request(address, write, tag))
                .expect("the port exists");
            prop_assert_eq!(forwarding.dropped, None);
            match write {
                Some(value) => {
                    bus.write32(address, value);
                    prop_assert!(forwarding.deliveries.is_empty(), "a posted write is not answered");
                }
                None => {
                    let expected = bus.read32(address);
                    prop_assert_eq!(forwarding.deliveries.len(), 1);
                    let reply = &forwarding.deliveries[0];
                    prop_assert_eq!(reply.to, Destination::Port(FABRIC_PORT));
                    let Body::Completion(completion) = reply.packet.header.body else {
                        return Err(TestCaseError::fail("not a completion"));
                    };
                    prop_assert_eq!(completion.status, CompletionStatus::Successful);
                    prop_assert_eq!(completion.tag, Tag::from_8bit(tag));
                    prop_assert_eq!(&reply.packet.payload[..], &expected.to_le_bytes()[..]);
                }
            }
        }
        // Both switches hold the same registers and route alike.
        for address in registers() {
            prop_assert_eq!(in_band.read32(address), bus.read32(address), "{:#x}", address);
        }
        prop_assert_eq!(in_band.switch().routes(), bus.switch().routes());
        prop_assert_eq!(in_band.take_injected(), bus.take_injected());
    }
}
