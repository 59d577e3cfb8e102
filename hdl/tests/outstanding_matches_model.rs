//! The RTL outstanding-request table agrees with weft-model's `Switch`.
//!
//! A model switch with one host port and two endpoint ports (GPU A and B,
//! both bound to the host) takes random host reads, locked reads and
//! AtomicOps into the GPUs' BARs, completions from the GPUs (to a fabric
//! tag in flight or any tag, to the proxy or another function on its bus,
//! partial or last, with and without data), abandons of a GPU's port and
//! advances of time past the completion timeout. The RTL table, offered
//! the same host requests and fabric completions, hands out the same
//! fabric tags in the same round-robin order, pushes back exactly when
//! the model does (every tag in use), restores the same host requester ID
//! and tag, drops the same completions as unexpected, and emits the same
//! error completions (Unsupported Request for an abandon, Completer Abort
//! for a timeout). Then directed tests from the spec.

mod common;

use common::tlp::{attributes, header_bytes, header_dws, wire_header};
use proptest::prelude::*;
use rust_hdl::prelude::*;
use weft_hdl::driver::CycleDriver;
use weft_hdl::tables::OutstandingTable;
use weft_model::*;
use weft_pcie::tlp::{
    AddressType, Attributes, Body, Completion, CompletionStatus, Header, MemoryOp, MemoryRequest,
    Tag, TrafficClass,
};
use weft_pcie::Bdf;
use weft_regs::capacity::OUTSTANDING_PER_HOST;

const HOST: PortIndex = PortIndex(0);
const GPUS: [PortIndex; 2] = [PortIndex(1), PortIndex(2)];
/// The host port's proxy requester ID, and its virtual upstream port's completer ID.
const PROXY: Bdf = Bdf::new(0xf0, 0, 0);
const VUSP: Bdf = Bdf::new(0x10, 0, 0);
/// The GPUs' fabric IDs.
const GPU_IDS: [Bdf; 2] = [Bdf::new(2, 0, 0), Bdf::new(3, 0, 0)];
/// Each GPU's BAR0, in the host's domain and in the fabric.
const BARS_HOST: [u64; 2] = [0x9000_0000, 0x9100_0000];
const BARS_FABRIC: [u64; 2] = [0x40_0000_0000, 0x40_1000_0000];
const BAR_SIZE: u64 = 16 << 20;
/// The completion timeout of the test, in nanoseconds of model time and ticks of the RTL's counter.
const TIMEOUT_NS: u64 = 5_000;
/// Cycles for the RTL's sweep to visit every entry once when nothing
/// makes it wait (no request or completion is offered meanwhile).
const SWEEP_CYCLES: u64 = OUTSTANDING_PER_HOST as u64 + 4;

/// The host's view of its two GPUs.
fn windows() -> Vec<Window> {
    (0..2)
        .map(|g| Window {
            base: BARS_HOST[g],
            size: BAR_SIZE,
            fabric_base: BARS_FABRIC[g],
            permissions: Permissions::READ_WRITE,
        })
        .collect()
}

/// One host port and two GPUs bound to it, routed both ways.
fn model() -> Switch {
    let mut switch = Switch::new(3);
    let owner = Some(Owner {
        host: HostIndex(0),
        proxy_id: PROXY,
    });
    switch
        .set_port(
            HOST,
            PortTables {
                role: PortRole::Host {
                    host: HostIndex(0),
                    proxy_id: PROXY,
                },
                windows: windows(),
                completer_id: VUSP,
                ..PortTables::default()
            },
        )
        .expect("within capacity");
    for g in 0..2 {
        switch
            .set_port(
                GPUS[g],
                PortTables {
                    role: PortRole::Endpoint {
                        owner,
                        buses: (GPU_IDS[g].bus(), GPU_IDS[g].bus()),
                    },
                    completer_id: Bdf::new(1, 0, 0),
                    ..PortTables::default()
                },
            )
            .expect("within capacity");
    }
    let mut routes = RouteTables {
        addresses: (0..2)
            .map(|g| AddressRoute {
                base: BARS_FABRIC[g],
                size: BAR_SIZE,
                to: Destination::Port(GPUS[g]),
            })
            .collect(),
        ..RouteTables::default()
    };
    routes.buses[usize::from(PROXY.bus())] = Some(Destination::Port(HOST));
    switch.set_routes(routes).expect("within capacity");
    switch.set_completion_timeout(TIMEOUT_NS);
    switch
}

/// The RTL table, its port's IDs and the timeout set, error completions taken.
fn rtl() -> CycleDriver<OutstandingTable> {
    let mut driver = CycleDriver::new(OutstandingTable::default(), |t| &mut t.clock)
        .expect("the table connects");
    let table = driver.block();
    table.proxy_id.next = u32::from(PROXY.0).to_bits();
    table.completer_id.next = u32::from(VUSP.0).to_bits();
    table.timeout.next = (TIMEOUT_NS as u32).to_bits();
    table.error_ready.next = true;
    driver
}

/// A host's non-posted memory request into GPU `gpu`'s BAR.
#[derive(Clone, Debug)]
struct HostRequest {
    gpu: usize,
    op: MemoryOp,
    offset: u64,
    length_dw: u16,
    /// First DW BE of a 1 DW read; else how many low bytes of the first DW are disabled.
    first_be: u8,
    /// How many high bytes of the last DW are disabled.
    last_be: u8,
    requester: u16,
    tag: u16,
    traffic_class: u8,
    attributes: u8,
}

impl HostRequest {
    /// Its wire bytes, if weft-pcie accepts the combination drawn.
    fn bytes(&self) -> Option<Vec<u8>> {
        let atomic = !matches!(self.op, MemoryOp::Read | MemoryOp::ReadLocked);
        // Table 2-15: operand sizes and natural alignment.
        let (length_dw, align, first_be, last_be) = match self.op {
            MemoryOp::FetchAdd | MemoryOp::Swap => {
                let dw = 1 + self.length_dw % 2;
                (dw, u64::from(dw) * 4, 0, 0)
            }
            MemoryOp::CompareAndSwap => {
                let dw = 2 << (self.length_dw % 3);
                (dw, u64::from(dw) * 2, 0, 0)
            }
            _ if self.length_dw == 1 => (1, 4, self.first_be, 0),
            // §2.2.5: enabled bytes contiguous from the first DW's to the last's.
            _ => (
                self.length_dw,
                4,
                (0xf << (self.first_be % 4)) & 0xf,
                0xf >> (self.last_be % 4),
            ),
        };
        let offset = (self.offset % BAR_SIZE) & !(align - 1);
        // §2.2.7.1: no request crosses a 4 KiB boundary.
        let room = ((0x1000 - (offset & 0xfff)) / 4) as u16;
        let length_dw = if atomic {
            length_dw
        } else {
            length_dw.min(room)
        };
        let last_be = if length_dw == 1 { 0 } else { last_be };
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Memory(MemoryRequest {
                op: self.op,
                traffic_class: TrafficClass::from_bits(self.traffic_class),
                attributes: attributes(self.attributes),
                address_type: AddressType::Untranslated,
                requester: Bdf(self.requester),
                tag: Tag::new(self.tag).expect("drawn within 10 bits"),
                address: BARS_HOST[self.gpu] + offset,
                length_dw,
                first_be,
                last_be,
                processing_hint: None,
            }),
        };
        let payload = if atomic {
            usize::from(length_dw) * 4
        } else {
            0
        };
        Packet::new(header, vec![0xa5; payload]).to_bytes().ok()
    }
}

fn host_request() -> impl Strategy<Value = HostRequest> {
    (
        0..2usize,
        prop::sample::select(
            &[
                MemoryOp::Read,
                MemoryOp::Read,
                MemoryOp::ReadLocked,
                MemoryOp::FetchAdd,
                MemoryOp::Swap,
                MemoryOp::CompareAndSwap,
            ][..],
        ),
        any::<u64>(),
        prop_oneof![3 => 1u16..=16, 1 => 1u16..=1024],
        (0u8..16, 0u8..16),
        (any::<u16>(), 0u16..=Tag::MAX, 0u8..8, 0u8..8),
    )
        .prop_map(
            |(gpu, op, offset, length_dw, (first_be, last_be), (requester, tag, tc, attr))| {
                HostRequest {
                    gpu,
                    op,
                    offset,
                    length_dw,
                    first_be,
                    last_be,
                    requester,
                    tag,
                    traffic_class: tc,
                    attributes: attr,
                }
            },
        )
}

/// A GPU's completion towards the host port.
#[derive(Clone, Debug)]
struct GpuCompletion {
    gpu: usize,
    /// A tag handed out before (by index into them), or any tag.
    tag: Result<prop::sample::Index, u16>,
    /// The requester function on the proxy's bus: 0 is the proxy itself.
    function: u8,
    /// Data DWs, if it carries data.
    data_dw: Option<u16>,
    /// Byte Count as an offset from what this completion's data covers.
    byte_count_delta: i16,
    lower_address: u8,
}

impl GpuCompletion {
    fn bytes(&self, handed_out: &[u16]) -> Option<Vec<u8>> {
        let tag = match &self.tag {
            Ok(index) if !handed_out.is_empty() => handed_out[index.index(handed_out.len())],
            Ok(_) => 0,
            Err(tag) => *tag,
        };
        let covered = match self.data_dw {
            Some(dw) => i32::from(dw) * 4 - i32::from(self.lower_address & 3),
            None => 4,
        };
        let byte_count = (covered + i32::from(self.byte_count_delta)).clamp(1, 4096) as u16;
        let header = Header {
            digest_present: false,
            poisoned: false,
            body: Body::Completion(Completion {
                locked: false,
                traffic_class: TrafficClass::default(),
                attributes: Attributes::default(),
                completer: GPU_IDS[self.gpu],
                status: CompletionStatus::Successful,
                byte_count_modified: false,
                byte_count,
                requester: Bdf::new(PROXY.bus(), 0, self.function),
                tag: Tag::new(tag).expect("10-bit tags only"),
                lower_address: self.lower_address,
                data_dw: self.data_dw,
            }),
        };
        let payload = usize::from(self.data_dw.unwrap_or(0)) * 4;
        Packet::new(header, vec![0x3c; payload]).to_bytes().ok()
    }
}

fn gpu_completion() -> impl Strategy<Value = GpuCompletion> {
    (
        0..2usize,
        prop_oneof![6 => any::<prop::sample::Index>().prop_map(Ok), 1 => (0u16..=Tag::MAX).prop_map(Err)],
        prop_oneof![6 => Just(0u8), 1 => 1u8..8],
        prop_oneof![1 => Just(None), 4 => (1u16..=32).prop_map(Some), 1 => (1u16..=1024).prop_map(Some)],
        prop_oneof![2 => Just(0i16), 2 => 1i16..=4, 1 => 5i16..=256, 1 => -3i16..0],
        0u8..0x80,
    )
        .prop_map(
            |(gpu, tag, function, data_dw, byte_count_delta, lower_address)| GpuCompletion {
                gpu,
                tag,
                function,
                data_dw,
                byte_count_delta,
                lower_address,
            },
        )
}

#[derive(Clone, Debug)]
enum Step {
    Request(HostRequest),
    Complete(GpuCompletion),
    /// The completion leaves void: looked up, then freeing nothing.
    CompleteVoid(GpuCompletion),
    /// Model time moves on by this many nanoseconds.
    Advance(u64),
    /// GPU `.0` is gone: by `abandon_requests_to`, or `abandon_host_requests_to` when `.1`.
    Abandon(usize, bool),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        12 => host_request().prop_map(Step::Request),
        10 => gpu_completion().prop_map(Step::Complete),
        2 => gpu_completion().prop_map(Step::CompleteVoid),
        1 => prop_oneof![0..TIMEOUT_NS, TIMEOUT_NS..3 * TIMEOUT_NS].prop_map(Step::Advance),
        1 => (0..2usize, any::<bool>()).prop_map(|(g, h)| Step::Abandon(g, h)),
    ]
}

/// The header bytes of the model's deliveries to the host port, sorted.
fn model_errors(deliveries: &[Delivery]) -> Vec<Vec<u8>> {
    let mut headers: Vec<Vec<u8>> = deliveries
        .iter()
        .map(|d| {
            assert_eq!(d.to, Destination::Port(HOST));
            wire_header(&d.packet.to_bytes().expect("a legal completion"))
        })
        .collect();
    headers.sort();
    headers
}

/// Runs the RTL `cycles` cycles, taking its error completions when
/// `ready` says so, and returns their header bytes, sorted.
fn rtl_errors(driver: &mut CycleDriver<OutstandingTable>, cycles: u64, ready: u64) -> Vec<Vec<u8>> {
    let mut headers = Vec::new();
    for cycle in 0..cycles {
        let take = ready.rotate_left(cycle as u32) & 1 != 0;
        driver.block().error_ready.next = take;
        driver.settle().expect("the table settles");
        let table = driver.block();
        if take && table.error_valid.val() {
            headers.push(header_bytes([
                table.error_dw0.val().to_u32(),
                table.error_dw1.val().to_u32(),
                table.error_dw2.val().to_u32(),
                0,
            ]));
        }
        driver.tick().expect("the table settles");
    }
    driver.block().error_ready.next = true;
    headers.sort();
    headers
}

/// Offers a host request to both; returns the fabric tag the model gave it.
fn offer_request(
    switch: &mut Switch,
    driver: &mut CycleDriver<OutstandingTable>,
    gpu: usize,
    bytes: &[u8],
) -> Result<Option<u16>, TestCaseError> {
    let model = switch.ingress(HOST, bytes);
    let dws = header_dws(bytes, 0);
    let table = driver.block();
    table.request.next = true;
    table.request_dw0.next = dws[0].to_bits();
    table.request_dw1.next = dws[1].to_bits();
    table.request_dw2.next = dws[2].to_bits();
    table.request_dw3.next = dws[3].to_bits();
    table.request_cpu.next = false;
    table.request_port.next = u32::from(GPUS[gpu].0).to_bits();
    driver.settle().expect("the table settles");
    let (available, tag) = (
        driver.block().available.val(),
        driver.block().fabric_tag.val().to_u32() as u16,
    );
    driver.tick().expect("the table settles");
    driver.block().request.next = false;
    let tag = match model {
        Err(IngressError::Backpressure(HOST)) => {
            prop_assert!(!available, "the model has every tag in use, the RTL not");
            None
        }
        Ok(forwarding) => {
            prop_assert_eq!(forwarding.dropped, None);
            prop_assert_eq!(forwarding.deliveries.len(), 1);
            let delivery = &forwarding.deliveries[0];
            prop_assert_eq!(delivery.to, Destination::Port(GPUS[gpu]));
            let Body::Memory(request) = delivery.packet.header.body else {
                return Err(TestCaseError::fail("a memory request leaves as one"));
            };
            prop_assert!(available, "the RTL pushes back, the model has a tag free");
            prop_assert_eq!(tag, request.tag.get(), "fabric tag");
            Some(tag)
        }
        Err(other) => return Err(TestCaseError::fail(format!("model refused: {other}"))),
    };
    Ok(tag)
}

/// Offers a GPU's completion to both and compares what reaches the host;
/// then its last beat passes, whole or `void`. A void completion is one
/// whose ingress found it Malformed only after its first beat was looked
/// up (PCIe Base 6.0 §2.2.2): the model's ingress drops it before its
/// table, as it drops this one offered a DW short. Returns the host tag
/// the table's lookup found, if it matched.
fn offer_completion(
    switch: &mut Switch,
    driver: &mut CycleDriver<OutstandingTable>,
    gpu: usize,
    bytes: &[u8],
    void: bool,
) -> Result<Option<u32>, TestCaseError> {
    let offered = if void {
        &bytes[..bytes.len() - 4]
    } else {
        bytes
    };
    let model = switch.ingress(GPUS[gpu], offered).expect("the port exists");
    let dws = header_dws(bytes, 0);
    let table = driver.block();
    table.completion.next = true;
    table.completion_dw0.next = dws[0].to_bits();
    table.completion_dw1.next = dws[1].to_bits();
    table.completion_dw2.next = dws[2].to_bits();
    driver.tick().expect("the table settles");
    driver.block().completion.next = false;
    driver.settle().expect("the table settles");
    let table = driver.block();
    prop_assert!(table.looked_up.val());
    match model.dropped {
        Some(DropReason::Malformed) if void => {}
        Some(DropReason::UnexpectedCompletion) => {
            prop_assert!(!table.matched.val(), "the model drops it as unexpected");
        }
        None => {
            prop_assert!(table.matched.val(), "the model forwards it to the host");
            prop_assert_eq!(model.deliveries.len(), 1);
            let Body::Completion(restored) = model.deliveries[0].packet.header.body else {
                return Err(TestCaseError::fail("a completion stays one"));
            };
            prop_assert_eq!(
                table.host_requester.val().to_u32(),
                u32::from(restored.requester.0),
                "host requester ID"
            );
            prop_assert_eq!(
                table.host_tag.val().to_u32(),
                u32::from(restored.tag.get()),
                "host tag"
            );
        }
        Some(other) => return Err(TestCaseError::fail(format!("model dropped: {other:?}"))),
    }
    let table = driver.block();
    let found = table.matched.val().then(|| table.host_tag.val().to_u32());
    table.completion_end.next = true;
    table.completion_void.next = void;
    driver.tick().expect("the table settles");
    driver.block().completion_end.next = false;
    driver.settle().expect("the table settles");
    Ok(found)
}

fn run_steps(prefill: usize, steps: &[Step]) -> Result<(), TestCaseError> {
    let mut switch = model();
    let mut driver = rtl();
    let mut now = 0u64;
    let mut handed_out: Vec<u16> = Vec::new();
    let filler = HostRequest {
        gpu: 0,
        op: MemoryOp::Read,
        offset: 0x40,
        length_dw: 1,
        first_be: 0xf,
        last_be: 0,
        requester: 0x0100,
        tag: 7,
        traffic_class: 0,
        attributes: 0,
    };
    let filler_bytes = filler.bytes().expect("a legal read");
    for _ in 0..prefill {
        if let Some(tag) = offer_request(&mut switch, &mut driver, 0, &filler_bytes)? {
            handed_out.push(tag);
        }
    }
    for step in steps {
        match step {
            Step::Request(request) => {
                let Some(bytes) = request.bytes() else {
                    continue;
                };
                if let Some(tag) = offer_request(&mut switch, &mut driver, request.gpu, &bytes)? {
                    handed_out.push(tag);
                }
            }
            Step::Complete(completion) | Step::CompleteVoid(completion) => {
                let Some(bytes) = completion.bytes(&handed_out) else {
                    continue;
                };
                let void = matches!(step, Step::CompleteVoid(_));
                offer_completion(&mut switch, &mut driver, completion.gpu, &bytes, void)?;
            }
            Step::Advance(by) => {
                now += by;
                let expected = model_errors(&switch.advance_to(now));
                driver.block().now.next = (now as u32).to_bits();
                let got = rtl_errors(&mut driver, SWEEP_CYCLES, u64::MAX);
                prop_assert_eq!(got, expected, "timed-out requests at {} ns", now);
            }
            Step::Abandon(gpu, per_host) => {
                let deliveries = if *per_host {
                    switch.abandon_host_requests_to(HOST, GPUS[*gpu])
                } else {
                    switch.abandon_requests_to(GPUS[*gpu])
                };
                let expected = model_errors(&deliveries);
                let table = driver.block();
                table.abandon.next = true;
                table.abandon_port.next = u32::from(GPUS[*gpu].0).to_bits();
                driver.tick().expect("the table settles");
                driver.block().abandon.next = false;
                let mut got = rtl_errors(&mut driver, SWEEP_CYCLES, u64::MAX);
                driver.settle().expect("the table settles");
                prop_assert!(!driver.block().abandoning.val(), "the sweep has ended");
                got.sort();
                prop_assert_eq!(got, expected, "abandoned requests to GPU {}", gpu);
            }
        }
        driver.settle().expect("the table settles");
        prop_assert_eq!(
            driver.block().in_flight.val().to_u32() as usize,
            switch.outstanding(HOST),
            "requests in flight after {:?}",
            step
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn outstanding_table_matches_the_model(
        prefill in prop_oneof![4 => Just(0usize), 1 => (OUTSTANDING_PER_HOST - 8)..=OUTSTANDING_PER_HOST],
        steps in prop::collection::vec(step(), 1..48),
    ) {
        run_steps(prefill, &steps)?;
    }
}

/// A read of `length_dw` DWs by the host into GPU A's BAR, with host tag `tag`.
fn read(length_dw: u16, tag: u16) -> Vec<u8> {
    HostRequest {
        gpu: 0,
        op: MemoryOp::Read,
        offset: 0x100,
        length_dw,
        first_be: 0xf,
        last_be: 0xf,
        requester: 0x0100,
        tag,
        traffic_class: 0,
        attributes: 0,
    }
    .bytes()
    .expect("a legal read")
}

/// GPU A's successful completion with data to the proxy's fabric tag `tag`.
fn completion(tag: u16, data_dw: u16, byte_count_delta: i16) -> Vec<u8> {
    GpuCompletion {
        gpu: 0,
        tag: Err(tag),
        function: 0,
        data_dw: Some(data_dw),
        byte_count_delta,
        lower_address: 0,
    }
    .bytes(&[])
    .expect("a legal completion")
}

/// The status field of an error completion's header bytes (§2.2.9.1: DW1 bits 15:13).
fn status(header: &[u8]) -> u8 {
    header[6] >> 5
}

#[test]
fn a_full_table_pushes_back_until_a_tag_is_freed() -> Result<(), TestCaseError> {
    let (mut switch, mut driver) = (model(), rtl());
    for expected in 0..OUTSTANDING_PER_HOST as u16 {
        let tag = offer_request(&mut switch, &mut driver, 0, &read(1, 0))?;
        assert_eq!(tag, Some(expected), "tags are handed out in order");
    }
    assert_eq!(
        offer_request(&mut switch, &mut driver, 0, &read(1, 0))?,
        None,
        "every tag is in use: the request is pushed back"
    );
    offer_completion(&mut switch, &mut driver, 0, &completion(700, 1, 0), false)?;
    assert_eq!(
        offer_request(&mut switch, &mut driver, 0, &read(1, 0))?,
        Some(700),
        "the only free tag"
    );
    Ok(())
}

#[test]
fn a_completion_for_a_free_tag_is_unexpected() -> Result<(), TestCaseError> {
    let (mut switch, mut driver) = (model(), rtl());
    let dropped = switch
        .clone()
        .ingress(GPUS[0], &completion(3, 1, 0))
        .expect("the port exists");
    assert_eq!(dropped.dropped, Some(DropReason::UnexpectedCompletion));
    let found = offer_completion(&mut switch, &mut driver, 0, &completion(3, 1, 0), false)?;
    assert_eq!(found, None);
    Ok(())
}

#[test]
fn only_the_last_completion_frees_the_entry() -> Result<(), TestCaseError> {
    let (mut switch, mut driver) = (model(), rtl());
    let host_tag = 0x2a5;
    assert_eq!(
        offer_request(&mut switch, &mut driver, 0, &read(16, host_tag))?,
        Some(0)
    );
    // §2.3.1.1: 64 bytes remain, this completion carries 32 of them.
    let found = offer_completion(&mut switch, &mut driver, 0, &completion(0, 8, 32), false)?;
    assert_eq!(found, Some(u32::from(host_tag)));
    assert_eq!(
        driver.block().in_flight.val().to_u32(),
        1,
        "still in flight"
    );
    // The last 32 bytes.
    let found = offer_completion(&mut switch, &mut driver, 0, &completion(0, 8, 0), false)?;
    assert_eq!(found, Some(u32::from(host_tag)));
    assert_eq!(driver.block().in_flight.val().to_u32(), 0, "retired");
    let found = offer_completion(&mut switch, &mut driver, 0, &completion(0, 8, 0), false)?;
    assert_eq!(found, None, "a duplicate finds no entry");
    Ok(())
}

#[test]
fn a_void_completion_frees_nothing() -> Result<(), TestCaseError> {
    // A completion that would finish its request but leaves void (found
    // Malformed after its first beat, §2.2.2) never reached the model's
    // table: the request stays in flight until a whole one finishes it.
    let (mut switch, mut driver) = (model(), rtl());
    offer_request(&mut switch, &mut driver, 0, &read(8, 0x11))?;
    let found = offer_completion(&mut switch, &mut driver, 0, &completion(0, 8, 0), true)?;
    assert_eq!(found, Some(0x11), "looked up at its first beat");
    assert_eq!(
        driver.block().in_flight.val().to_u32(),
        1,
        "still in flight"
    );
    let found = offer_completion(&mut switch, &mut driver, 0, &completion(0, 8, 0), false)?;
    assert_eq!(found, Some(0x11));
    assert_eq!(driver.block().in_flight.val().to_u32(), 0, "retired");
    Ok(())
}

#[test]
fn a_request_times_out_when_its_age_reaches_the_timeout() -> Result<(), TestCaseError> {
    let (mut switch, mut driver) = (model(), rtl());
    offer_request(&mut switch, &mut driver, 0, &read(1, 9))?;
    driver.block().now.next = (TIMEOUT_NS as u32 - 1).to_bits();
    assert!(rtl_errors(&mut driver, SWEEP_CYCLES, u64::MAX).is_empty());
    assert!(switch.advance_to(TIMEOUT_NS - 1).is_empty());
    driver.block().now.next = (TIMEOUT_NS as u32).to_bits();
    let got = rtl_errors(&mut driver, SWEEP_CYCLES, u64::MAX);
    assert_eq!(got, model_errors(&switch.advance_to(TIMEOUT_NS)));
    assert_eq!(got.len(), 1);
    assert_eq!(status(&got[0]), CompletionStatus::CompleterAbort.bits());
    Ok(())
}

#[test]
fn abandoned_requests_wait_for_the_error_completions_to_be_taken() -> Result<(), TestCaseError> {
    let (mut switch, mut driver) = (model(), rtl());
    for gpu in [0, 1, 0, 0, 1] {
        let bytes = HostRequest {
            gpu,
            ..HostRequest {
                gpu: 0,
                op: MemoryOp::ReadLocked,
                offset: 0x2000,
                length_dw: 4,
                first_be: 0x3,
                last_be: 0xc,
                requester: 0x0100,
                tag: 0x155,
                // §6.5: locked transactions use TC0 only.
                traffic_class: 0,
                attributes: 0b010,
            }
        }
        .bytes()
        .expect("a legal locked read");
        offer_request(&mut switch, &mut driver, gpu, &bytes)?;
    }
    driver.block().abandon.next = true;
    driver.block().abandon_port.next = u32::from(GPUS[0].0).to_bits();
    driver.tick().expect("the table settles");
    driver.block().abandon.next = false;
    // Taken one cycle in eight: each one the sweep holds costs it up to eight cycles.
    let got = rtl_errors(&mut driver, SWEEP_CYCLES + 3 * 8, 0x0101_0101_0101_0101);
    assert_eq!(got, model_errors(&switch.abandon_requests_to(GPUS[0])));
    assert_eq!(got.len(), 3);
    assert!(got
        .iter()
        .all(|h| status(h) == CompletionStatus::UnsupportedRequest.bits()));
    assert_eq!(driver.block().in_flight.val().to_u32(), 2);
    Ok(())
}

#[test]
fn a_request_to_the_cpu_is_not_abandoned_with_a_port() -> Result<(), TestCaseError> {
    // The model abandons entries whose target is `Destination::Port(port)`
    // only; one routed to the management CPU stays, whatever its port field.
    let mut driver = rtl();
    let dws = header_dws(&read(1, 3), 0);
    let table = driver.block();
    table.request.next = true;
    table.request_dw0.next = dws[0].to_bits();
    table.request_dw1.next = dws[1].to_bits();
    table.request_dw2.next = dws[2].to_bits();
    table.request_cpu.next = true;
    table.request_port.next = u32::from(GPUS[0].0).to_bits();
    driver.tick().expect("the table settles");
    let table = driver.block();
    table.request.next = false;
    table.abandon.next = true;
    table.abandon_port.next = u32::from(GPUS[0].0).to_bits();
    driver.tick().expect("the table settles");
    driver.block().abandon.next = false;
    prop_assert!(rtl_errors(&mut driver, SWEEP_CYCLES, u64::MAX).is_empty());
    driver.settle().expect("the table settles");
    prop_assert_eq!(driver.block().in_flight.val().to_u32(), 1);
    Ok(())
}
