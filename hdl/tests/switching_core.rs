//! The switching core against the ordering checker of weft-model and TLPs built by weft-pcie.
//!
//! Every run is judged by `weft_model::ordering::check` (PCIe Base 6.0
//! §2.4.1) and by content: each TLP that leaves must be, word for word, one
//! that entered, at the egress it was routed to. Small configurations (4
//! ports, 64-bit payload) keep debug runs fast; the logic does not depend
//! on the sizes.

use std::collections::HashMap;

use weft_hdl::switching::traffic::{Environment, ProtocolError, TestTlp, Traffic};
use weft_hdl::switching::{CLASS_COMPLETION, CLASS_NON_POSTED, CLASS_POSTED, SLOTS};
use weft_model::ordering::{check, Routed, TrackedTlp, Violation};
use weft_pcie::tlp::{
    AddressType, Attributes, Body, Completion, CompletionStatus, FlowControlClass, Header,
    MemoryOp, MemoryRequest, Tag, TrafficClass,
};
use weft_pcie::Bdf;

const W: usize = 64;
const N: usize = 4;

/// Runs `test` on a thread with a stack large enough for the core: a
/// rust-hdl block is built by value, and debug builds copy it on the stack.
fn with_stack(test: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(test)
        .expect("spawn a test thread")
        .join()
        .expect("the test passes");
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn memory(id: u64, op: MemoryOp, relaxed: bool, length_dw: u16) -> Header {
    Header {
        digest_present: false,
        poisoned: false,
        body: Body::Memory(MemoryRequest {
            op,
            traffic_class: TrafficClass::TC0,
            attributes: Attributes {
                relaxed_ordering: relaxed,
                no_snoop: false,
                id_based_ordering: false,
            },
            address_type: AddressType::Untranslated,
            requester: Bdf(0x0100),
            tag: Tag::from_8bit(id as u8),
            // Unique per id, 4 KiB aligned, below 4 GiB: a 3 DW header.
            address: 0x1000_0000 + (id << 12),
            length_dw,
            first_be: 0xf,
            last_be: if length_dw > 1 { 0xf } else { 0 },
            processing_hint: None,
        }),
    }
}

fn completion(id: u64, relaxed: bool, length_dw: u16) -> Header {
    Header {
        digest_present: false,
        poisoned: false,
        body: Body::Completion(Completion {
            locked: false,
            traffic_class: TrafficClass::TC0,
            attributes: Attributes {
                relaxed_ordering: relaxed,
                no_snoop: false,
                id_based_ordering: false,
            },
            // Unique per id: the completer ID carries it.
            completer: Bdf(id as u16),
            status: CompletionStatus::Successful,
            byte_count_modified: false,
            byte_count: length_dw * 4,
            requester: Bdf(0x0100),
            tag: Tag::from_8bit(id as u8),
            lower_address: 0,
            data_dw: Some(length_dw),
        }),
    }
}

/// A TLP of `class` with `length_dw` of data (a read carries none), as the test and the checker see it.
fn tlp(
    id: u64,
    class: FlowControlClass,
    relaxed: bool,
    length_dw: u16,
    egress: usize,
) -> (TestTlp, Routed) {
    let header = match class {
        FlowControlClass::Posted => memory(id, MemoryOp::Write, relaxed, length_dw),
        FlowControlClass::NonPosted => memory(id, MemoryOp::Read, relaxed, length_dw),
        FlowControlClass::Completion => completion(id, relaxed, length_dw),
    };
    let dws = header.encode_dws().expect("valid header");
    let payload = (0..header.payload_len_dw() as u64)
        .map(|k| (id.wrapping_mul(0x9e37_79b9) ^ k.wrapping_mul(0x85eb_ca6b)) as u32)
        .collect();
    let code = match class {
        FlowControlClass::Posted => CLASS_POSTED,
        FlowControlClass::NonPosted => CLASS_NON_POSTED,
        FlowControlClass::Completion => CLASS_COMPLETION,
    };
    (
        TestTlp {
            id,
            egress,
            class: code,
            header: [dws[0], dws[1], dws[2], dws[3]],
            payload,
        },
        Routed {
            egress,
            tlp: TrackedTlp::from_header(id, &header),
        },
    )
}

/// Judges a finished run: contents, credits and the ordering table.
fn judge(traffic: &Traffic<W, N>, routed: &HashMap<u64, Routed>) -> Vec<Violation> {
    // Find each departure's id by its exact contents (header and payload).
    let mut by_content = HashMap::new();
    for arrival in traffic.arrivals.iter().flatten() {
        by_content.insert(
            (arrival.tlp.header, arrival.tlp.payload.clone()),
            arrival.tlp.id,
        );
    }
    let left: Vec<Vec<u64>> = traffic
        .departures
        .iter()
        .map(|port| {
            port.iter()
                .map(|d| {
                    *by_content
                        .get(&(d.header, d.payload.clone()))
                        .expect("every departure is, word for word, a TLP that entered")
                })
                .collect()
        })
        .collect();
    let entered: Vec<Vec<Routed>> = traffic
        .arrivals
        .iter()
        .map(|port| port.iter().map(|a| routed[&a.tlp.id]).collect())
        .collect();
    // Every TLP that left had its class's credit consumed at its egress, once.
    for (e, port) in traffic.departures.iter().enumerate() {
        let mut per_class = [0u64; 3];
        let mut dws = 0;
        for d in port {
            let header = weft_pcie::tlp::Header::decode_dws(&d.header).expect("valid header");
            let class = match header.flow_control_class() {
                FlowControlClass::Posted => 0,
                FlowControlClass::NonPosted => 1,
                FlowControlClass::Completion => 2,
            };
            per_class[class] += 1;
            dws += u64::from(header.payload_len_dw());
        }
        assert_eq!(
            traffic.consumed[e], per_class,
            "credits consumed at egress {e}"
        );
        assert_eq!(
            traffic.consumed_dws[e], dws,
            "data DWs announced at egress {e}"
        );
    }
    check(&entered, &left)
}

fn class_of(code: u64) -> FlowControlClass {
    match code {
        0 => FlowControlClass::Posted,
        1 => FlowControlClass::NonPosted,
        _ => FlowControlClass::Completion,
    }
}

#[test]
fn random_traffic_under_stalls_and_starvation_is_delivered_intact_and_in_legal_order() {
    with_stack(|| {
        for seed in [1u64, 0xdead_beef, 42] {
            let mut rng = Rng(seed);
            let noise = move |salt: u64, threshold: u64| {
                move |cycle: u64, port: usize| {
                    let x =
                        (cycle ^ salt ^ ((port as u64) << 40)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    (x >> 33) % 8 >= threshold
                }
            };
            let ready = noise(seed, 2);
            let offer = noise(seed ^ 0x55, 1);
            // Credits come and go in windows of 64 cycles, per egress and class.
            let credit = move |cycle: u64, port: usize, class: u64| {
                let window = (cycle / 64) ^ (seed << 8) ^ ((port as u64) << 20) ^ (class << 30);
                window.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 61 != 0
            };
            let mut traffic = Traffic::<W, N>::new(Environment {
                ready: Box::new(ready),
                credit: Box::new(credit),
                offer: Box::new(offer),
            })
            .expect("core is well formed");
            let mut routed = HashMap::new();
            let mut id = 0;
            for ingress in 0..N {
                for _ in 0..60 {
                    let class = class_of(rng.below(3));
                    let beats = 1 + rng.below(16);
                    let length = (beats * (W as u64 / 32) - rng.below(2)).max(1) as u16;
                    let (test, route) = tlp(
                        id,
                        class,
                        rng.below(4) == 0,
                        length,
                        rng.below(N as u64) as usize,
                    );
                    routed.insert(id, route);
                    traffic.send(ingress, test);
                    id += 1;
                }
            }
            traffic
                .run_until_drained(40_000)
                .expect("everything leaves");
            assert_eq!(judge(&traffic, &routed), [], "seed {seed}");
        }
    });
}

#[test]
fn posted_requests_flow_while_non_posted_are_credit_starved() {
    with_stack(|| {
        // Egress 1 has no non-posted credit for 3000 cycles (§2.4.1 A3: posted
        // requests must be able to pass non-posted ones, or the fabric deadlocks).
        let mut traffic = Traffic::<W, N>::new(Environment {
            credit: Box::new(|cycle, port, class| {
                !(port == 1 && class == CLASS_NON_POSTED && cycle < 3000)
            }),
            ..Environment::unconstrained()
        })
        .expect("core is well formed");
        let mut routed = HashMap::new();
        let mut id = 0;
        // More reads than the buffer has slots, then writes, all from ingress 0 to egress 1.
        for class in [FlowControlClass::NonPosted, FlowControlClass::Posted] {
            for _ in 0..2 * SLOTS {
                let (test, route) = tlp(id, class, false, 4, 1);
                routed.insert(id, route);
                traffic.send(0, test);
                id += 1;
            }
        }
        for _ in 0..3000 {
            traffic.step().expect("protocol kept");
        }
        let left = &traffic.departures[1];
        assert_eq!(left.len(), 2 * SLOTS, "every write left, no read did");
        assert!(
            left.iter().all(|d| d.header[0] >> 30 & 1 == 1),
            "only writes (Fmt has data)"
        );
        // Credit returns: the reads follow.
        traffic.run_until_drained(3000).expect("everything leaves");
        assert_eq!(judge(&traffic, &routed), []);
    });
}

#[test]
fn reads_and_completions_wait_for_earlier_writes_unless_relaxed() {
    with_stack(|| {
        // Egress 2 has no posted credit for the first 500 cycles: the write
        // waits, and so must the read and the strict completion behind it
        // (B2a, D2a); the completion with Relaxed Ordering may go (D2b). It
        // enters before the strict one: completions keep FIFO order among themselves.
        let mut traffic = Traffic::<W, N>::new(Environment {
            credit: Box::new(|cycle, port, class| {
                !(port == 2 && class == CLASS_POSTED && cycle < 500)
            }),
            ..Environment::unconstrained()
        })
        .expect("core is well formed");
        let mut routed = HashMap::new();
        let plan = [
            (FlowControlClass::Posted, false),
            (FlowControlClass::NonPosted, false),
            (FlowControlClass::Completion, true),
            (FlowControlClass::Completion, false),
        ];
        for (id, &(class, relaxed)) in plan.iter().enumerate() {
            let (test, route) = tlp(id as u64, class, relaxed, 2, 2);
            routed.insert(id as u64, route);
            traffic.send(3, test);
        }
        for _ in 0..400 {
            traffic.step().expect("protocol kept");
        }
        let early: Vec<u32> = traffic.departures[2]
            .iter()
            .map(|d| d.header[1] >> 16)
            .collect();
        assert_eq!(
            early,
            [2],
            "only the relaxed completion (completer ID 2) passed the write"
        );
        traffic.run_until_drained(1000).expect("everything leaves");
        assert_eq!(judge(&traffic, &routed), []);
    });
}

#[test]
fn a_tlp_leaves_two_cycles_after_it_enters_and_before_it_has_fully_arrived() {
    with_stack(|| {
        // The ingress offers one beat every fourth cycle: cut-through means the
        // first beat leaves long before the last one has arrived.
        let mut traffic = Traffic::<W, N>::new(Environment {
            offer: Box::new(|cycle, _| cycle % 4 == 0),
            ..Environment::unconstrained()
        })
        .expect("core is well formed");
        let (test, route) = tlp(7, FlowControlClass::Posted, false, 32, 2);
        traffic.send(1, test);
        traffic.run_until_drained(500).expect("it leaves");
        let entered = traffic.arrivals[1][0].sop_cycle;
        let left = traffic.departures[2][0].sop_cycle;
        assert_eq!(left - entered, 2, "idle latency, sop to sop");
        assert_eq!(judge(&traffic, &HashMap::from([(7, route)])), []);
    });
}

#[test]
fn nothing_is_committed_to_an_egress_without_credit() {
    with_stack(|| {
        // No credit at all at egress 0: nothing leaves there, and the run reports stuck.
        let mut traffic = Traffic::<W, N>::new(Environment {
            credit: Box::new(|_, port, _| port != 0),
            ..Environment::unconstrained()
        })
        .expect("core is well formed");
        let (test, _) = tlp(1, FlowControlClass::Posted, false, 4, 0);
        traffic.send(0, test);
        assert_eq!(
            traffic.run_until_drained(300),
            Err(ProtocolError::Stuck { remaining: 1 })
        );
        assert!(traffic.departures[0].is_empty());
        assert_eq!(traffic.consumed[0], [0, 0, 0]);
    });
}
