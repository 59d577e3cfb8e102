//! A host port's outstanding-request table: the fabric tags of its
//! non-posted requests in flight, so every one of them is completed.
//!
//! This is weft-model's `OutstandingTable` as `Switch` uses it (DESIGN.md:
//! no host ever waits forever), held to it by
//! `hdl/tests/outstanding_matches_model.rs`:
//!
//! - **Allocation.** A host's non-posted request (memory read, locked
//!   read, AtomicOp) takes the first free entry at or after the one after
//!   the last it took, round-robin over all
//!   [`capacity::OUTSTANDING_PER_HOST`] entries, whose index is the fabric
//!   tag it travels with (PCIe Base 6.0 §2.2.6.2, 10-bit tags). The entry
//!   keeps the request's header DW0 and DW1 (the host's requester ID and
//!   tag, TC, attributes, byte enables, length), its address's low byte,
//!   where it was routed and when. [`OutstandingTable::available`] and
//!   [`OutstandingTable::fabric_tag`] are combinational: a request offered
//!   while `available` is low is not taken (the model's `Backpressure`),
//!   and the link partner offers it again.
//! - **Completion.** A completion to the port's proxy ID whose tag names
//!   an entry in flight is answered, one cycle later, with the host's
//!   requester ID and tag; any other is unexpected (the model's
//!   `UnexpectedCompletion` drop). The entry is freed by the completion
//!   that finishes the request: one without data, or one whose data covers
//!   the Byte Count still remaining (§2.3.1.1: Byte Count counts this
//!   completion's bytes and all after it; its first DW's data starts at
//!   Lower Address\[1:0\]). It is freed as the completion's last beat
//!   passes ([`OutstandingTable::completion_end`]), not as it is looked up,
//!   and not at all if that beat leaves it void: a completion its ingress
//!   found Malformed after its first beat never reached weft-model's
//!   table, so the request stays in flight and times out there, and here.
//! - **Abandon.** [`OutstandingTable::abandon`] completes every entry
//!   routed out of a port with Unsupported Request (the model's
//!   `abandon_requests_to`; `abandon_host_requests_to` is the same sweep
//!   on the one host port's table). The table takes no new request until
//!   the sweep has visited every entry once, so a request sent after the
//!   abandon is never mistaken for one before it.
//! - **Timeout.** An entry whose age, [`OutstandingTable::now`] minus its
//!   start, reaches [`OutstandingTable::timeout`] is completed with
//!   Completer Abort (the model's `advance_to`; the spec's completion
//!   timeout, §2.8). Times are a free-running counter and compared modulo
//!   2^32, so the timeout must stay below 2^31 ticks.
//!
//! Abandoned and timed-out entries are found by one sweep that visits an
//! entry per cycle, round and round (a whole pass takes
//! [`capacity::OUTSTANDING_PER_HOST`] cycles, 4 µs at 250 MHz against a
//! 50 µs minimum completion timeout), and emits at most one error
//! completion per cycle, built by [`ErrorCompletion`] from the stored
//! header. Entries are read by index only, by the completion lookup and by
//! the sweep, so they sit in block RAM (two read ports: the host IDs are
//! stored twice, once for each); the in-flight flags are flip-flops, as
//! the allocator searches all of them at once.

use rust_hdl::prelude::*;
use rust_hdl::widgets::prelude::RAM;
use weft_regs::capacity;

use crate::isolation::{
    ErrorCompletion, STATUS_BITS, STATUS_COMPLETER_ABORT, STATUS_UNSUPPORTED_REQUEST,
};
use crate::tables::address_route::PORT_BITS;
use crate::tables::id_map::ID_BITS;
use crate::translate::host_ingress::{drop_reason_code, DROP_REASON_BITS};

/// Bits of a fabric tag, the table's index: the whole 10-bit tag space (§2.2.6.2).
pub const TAG_BITS: usize = 10;
const _: () = assert!(1 << TAG_BITS == capacity::OUTSTANDING_PER_HOST);

/// Bits of a count of entries in flight (0 to every entry).
pub const COUNT_BITS: usize = TAG_BITS + 1;

/// Bits of the time counter and of the timeout, in the same ticks.
pub const TIME_BITS: usize = 32;

/// Bits of a stored host ID: the host's requester ID above its 10-bit tag.
const HOST_ID_BITS: usize = ID_BITS + TAG_BITS;

/// Bits of a stored route: the request's address byte above the CPU flag above the port.
const ROUTE_BITS: usize = 8 + 1 + PORT_BITS;

/// The in-flight flags are kept in words of 32, the width the allocator
/// searches at once.
const FLAG_WORD_BITS: usize = 5;
const FLAG_WORDS: usize = 1 << (TAG_BITS - FLAG_WORD_BITS);
// `update` splits tags at bit 5 with literals (constants would leak into the Verilog as names).
const _: () = assert!(FLAG_WORD_BITS == 5);

/// The lowest set bit of a 32-bit word.
#[derive(LogicBlock)]
struct LowestSetBit {
    bits: Signal<In, Bits<32>>,
    any: Signal<Out, Bit>,
    index: Signal<Out, Bits<FLAG_WORD_BITS>>,
    lowest: Signal<Local, Bits<32>>,
    /// Bit k of each position's index, k = 0..4: the index of a one-hot
    /// word is an OR per index bit, not a 32-deep priority chain.
    index_bits: [Constant<Bits<32>>; FLAG_WORD_BITS],
}

impl Default for LowestSetBit {
    fn default() -> Self {
        LowestSetBit {
            bits: Default::default(),
            any: Default::default(),
            index: Default::default(),
            lowest: Default::default(),
            index_bits: std::array::from_fn(|k| {
                let positions = (0..32u32).filter(|p| p >> k & 1 != 0);
                Constant::new(positions.fold(0u32, |mask, p| mask | 1 << p).to_bits())
            }),
        }
    }
}

impl Logic for LowestSetBit {
    #[hdl_gen]
    fn update(&mut self) {
        // x & -x keeps the lowest set bit.
        self.lowest.next = self.bits.val() & (!self.bits.val() + 1);
        self.any.next = self.bits.val().any();
        self.index.next = 0.into();
        for k in 0..FLAG_WORD_BITS {
            self.index.next = self
                .index
                .val()
                .replace_bit(k, (self.lowest.val() & self.index_bits[k].val()).any());
        }
    }
}

/// One host port's outstanding-request table.
#[derive(LogicBlock)]
pub struct OutstandingTable {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// A non-posted request asks for a fabric tag (taken if `available`).
    pub request: Signal<In, Bit>,
    /// Header DW0 of the request as the host sent it.
    pub request_dw0: Signal<In, Bits<32>>,
    /// Header DW1 of the request: the host's requester ID, Tag\[7:0\], byte enables.
    pub request_dw1: Signal<In, Bits<32>>,
    /// Header DW2 of the request (the address of a 3 DW header).
    pub request_dw2: Signal<In, Bits<32>>,
    /// Header DW3 of the request (the low address of a 4 DW header).
    pub request_dw3: Signal<In, Bits<32>>,
    /// The request was routed to the management CPU, not out of a port.
    pub request_cpu: Signal<In, Bit>,
    /// The port the request was routed out of (unless `request_cpu`).
    pub request_port: Signal<In, Bits<PORT_BITS>>,
    /// A request offered now is taken: an entry is free and no abandon sweep runs.
    pub available: Signal<Out, Bit>,
    /// The fabric tag a request offered now gets.
    pub fabric_tag: Signal<Out, Bits<TAG_BITS>>,
    /// A completion arrives for the host, to be looked up.
    pub completion: Signal<In, Bit>,
    /// Header DW0 of the completion as the fabric delivers it.
    pub completion_dw0: Signal<In, Bits<32>>,
    /// Header DW1 of the completion: completer ID, status, Byte Count.
    pub completion_dw1: Signal<In, Bits<32>>,
    /// Header DW2 of the completion: requester ID, Tag\[7:0\], Lower Address.
    pub completion_dw2: Signal<In, Bits<32>>,
    /// The port's proxy requester ID, the only requester its completions may name.
    pub proxy_id: Signal<In, Bits<ID_BITS>>,
    /// One cycle after `completion`: its lookup is answered below.
    pub looked_up: Signal<Out, Bit>,
    /// With `looked_up`: the completion matched an entry; else it is unexpected and dropped.
    pub matched: Signal<Out, Bit>,
    /// With `matched`: the host's requester ID, to restore in the completion.
    pub host_requester: Signal<Out, Bits<ID_BITS>>,
    /// With `matched`: the host's tag, to restore in the completion.
    pub host_tag: Signal<Out, Bits<TAG_BITS>>,
    /// The last beat of the completion looked up last passes (to the link,
    /// or discarded): if it finishes its request, the entry is freed now.
    pub completion_end: Signal<In, Bit>,
    /// With `completion_end`: the completion leaves void, so it frees nothing.
    pub completion_void: Signal<In, Bit>,
    /// Complete every entry routed out of `abandon_port` (taken unless `abandoning`).
    pub abandon: Signal<In, Bit>,
    /// The port whose endpoint is gone.
    pub abandon_port: Signal<In, Bits<PORT_BITS>>,
    /// An abandon sweep runs; no request is taken meanwhile.
    pub abandoning: Signal<Out, Bit>,
    /// The free-running time counter.
    pub now: Signal<In, Bits<TIME_BITS>>,
    /// The completion timeout, in ticks of `now` (at least 1, below 2^31).
    pub timeout: Signal<In, Bits<TIME_BITS>>,
    /// The port's completer ID, for the error completions.
    pub completer_id: Signal<In, Bits<ID_BITS>>,
    /// An error completion for an abandoned or timed-out request is presented below.
    pub error_valid: Signal<Out, Bit>,
    /// The error completion is taken this cycle.
    pub error_ready: Signal<In, Bit>,
    /// Error completion DW0.
    pub error_dw0: Signal<Out, Bits<32>>,
    /// Error completion DW1.
    pub error_dw1: Signal<Out, Bits<32>>,
    /// Error completion DW2.
    pub error_dw2: Signal<Out, Bits<32>>,
    /// Requests in flight.
    pub in_flight: Signal<Out, Bits<COUNT_BITS>>,
    used: [DFF<Bits<32>>; FLAG_WORDS],
    next: DFF<Bits<TAG_BITS>>,
    count: DFF<Bits<COUNT_BITS>>,
    scan: DFF<Bits<TAG_BITS>>,
    scan_stale: DFF<Bit>,
    sweeping_abandon: DFF<Bit>,
    abandon_target: DFF<Bits<PORT_BITS>>,
    abandon_left: DFF<Bits<COUNT_BITS>>,
    lookup_valid: DFF<Bit>,
    lookup_hit: DFF<Bit>,
    finishing: DFF<Bit>,
    finishing_tag: DFF<Bits<TAG_BITS>>,
    error_held: DFF<Bit>,
    error0: DFF<Bits<32>>,
    error1: DFF<Bits<32>>,
    error2: DFF<Bits<32>>,
    host_ids: RAM<Bits<HOST_ID_BITS>, TAG_BITS>,
    headers0: RAM<Bits<32>, TAG_BITS>,
    headers1: RAM<Bits<32>, TAG_BITS>,
    routes: RAM<Bits<ROUTE_BITS>, TAG_BITS>,
    issued: RAM<Bits<32>, TAG_BITS>,
    answer: ErrorCompletion,
    own_free: LowestSetBit,
    later_word: LowestSetBit,
    wrapped_word: LowestSetBit,
    chosen_free: LowestSetBit,
    all_used: Constant<Bits<32>>,
    all_entries: Constant<Bits<COUNT_BITS>>,
    answered_reason: Constant<Bits<DROP_REASON_BITS>>,
    unsupported_request: Constant<Bits<STATUS_BITS>>,
    completer_abort: Constant<Bits<STATUS_BITS>>,
    word_free: Signal<Local, Bits<32>>,
    start_word: Signal<Local, Bits<FLAG_WORD_BITS>>,
    own_word: Signal<Local, Bits<32>>,
    later_words: Signal<Local, Bits<32>>,
    chosen_word: Signal<Local, Bits<FLAG_WORD_BITS>>,
    chosen_used: Signal<Local, Bits<32>>,
    allocate: Signal<Local, Bit>,
    candidate: Signal<Local, Bits<TAG_BITS>>,
    completion_tag: Signal<Local, Bits<TAG_BITS>>,
    completion_used: Signal<Local, Bits<32>>,
    completion_hit: Signal<Local, Bit>,
    completion_bytes: Signal<Local, Bits<13>>,
    completion_data_bytes: Signal<Local, Bits<13>>,
    completion_last: Signal<Local, Bit>,
    completion_release: Signal<Local, Bit>,
    finished: Signal<Local, Bit>,
    scan_used: Signal<Local, Bits<32>>,
    scan_in_flight: Signal<Local, Bit>,
    scan_hold: Signal<Local, Bit>,
    timed_out: Signal<Local, Bit>,
    abandoned: Signal<Local, Bit>,
    fire: Signal<Local, Bit>,
    sweep_release: Signal<Local, Bit>,
    advance: Signal<Local, Bit>,
    scan_next: Signal<Local, Bits<TAG_BITS>>,
    start_abandon: Signal<Local, Bit>,
    address_byte: Signal<Local, Bits<8>>,
    own_select: Signal<Local, Bits<32>>,
    chosen_select: Signal<Local, Bits<32>>,
    completion_select: Signal<Local, Bits<32>>,
    scan_select: Signal<Local, Bits<32>>,
    set_bit: Signal<Local, Bits<32>>,
    own_picks: [Signal<Local, Bits<32>>; FLAG_WORDS],
    chosen_picks: [Signal<Local, Bits<32>>; FLAG_WORDS],
    completion_picks: [Signal<Local, Bits<32>>; FLAG_WORDS],
    scan_picks: [Signal<Local, Bits<32>>; FLAG_WORDS],
    completion_bit: Signal<Local, Bits<32>>,
    sweep_bit: Signal<Local, Bits<32>>,
    flags: [Signal<Local, Bits<32>>; FLAG_WORDS],
}

impl Default for OutstandingTable {
    fn default() -> Self {
        fn empty<const W: usize>() -> RAM<Bits<W>, TAG_BITS> {
            RAM::from(std::iter::repeat_n(
                Bits::default(),
                capacity::OUTSTANDING_PER_HOST,
            ))
        }
        OutstandingTable {
            clock: Default::default(),
            request: Default::default(),
            request_dw0: Default::default(),
            request_dw1: Default::default(),
            request_dw2: Default::default(),
            request_dw3: Default::default(),
            request_cpu: Default::default(),
            request_port: Default::default(),
            available: Default::default(),
            fabric_tag: Default::default(),
            completion: Default::default(),
            completion_dw0: Default::default(),
            completion_dw1: Default::default(),
            completion_dw2: Default::default(),
            proxy_id: Default::default(),
            looked_up: Default::default(),
            matched: Default::default(),
            host_requester: Default::default(),
            host_tag: Default::default(),
            completion_end: Default::default(),
            completion_void: Default::default(),
            abandon: Default::default(),
            abandon_port: Default::default(),
            abandoning: Default::default(),
            now: Default::default(),
            timeout: Default::default(),
            completer_id: Default::default(),
            error_valid: Default::default(),
            error_ready: Default::default(),
            error_dw0: Default::default(),
            error_dw1: Default::default(),
            error_dw2: Default::default(),
            in_flight: Default::default(),
            used: std::array::from_fn(|_| Default::default()),
            next: Default::default(),
            count: Default::default(),
            scan: Default::default(),
            scan_stale: Default::default(),
            sweeping_abandon: Default::default(),
            abandon_target: Default::default(),
            abandon_left: Default::default(),
            lookup_valid: Default::default(),
            lookup_hit: Default::default(),
            finishing: Default::default(),
            finishing_tag: Default::default(),
            error_held: Default::default(),
            error0: Default::default(),
            error1: Default::default(),
            error2: Default::default(),
            host_ids: empty(),
            headers0: empty(),
            headers1: empty(),
            routes: empty(),
            issued: empty(),
            answer: Default::default(),
            own_free: Default::default(),
            later_word: Default::default(),
            wrapped_word: Default::default(),
            chosen_free: Default::default(),
            all_used: Constant::new(u32::MAX.to_bits()),
            all_entries: Constant::new(capacity::OUTSTANDING_PER_HOST.to_bits()),
            // The sweep answers every entry: any drop reason that is answered will do.
            answered_reason: Constant::new(drop_reason_code("DROP_NO_ROUTE").to_bits()),
            unsupported_request: Constant::new(STATUS_UNSUPPORTED_REQUEST.to_bits()),
            completer_abort: Constant::new(STATUS_COMPLETER_ABORT.to_bits()),
            word_free: Default::default(),
            start_word: Default::default(),
            own_word: Default::default(),
            later_words: Default::default(),
            chosen_word: Default::default(),
            chosen_used: Default::default(),
            allocate: Default::default(),
            candidate: Default::default(),
            completion_tag: Default::default(),
            completion_used: Default::default(),
            completion_hit: Default::default(),
            completion_bytes: Default::default(),
            completion_data_bytes: Default::default(),
            completion_last: Default::default(),
            completion_release: Default::default(),
            finished: Default::default(),
            scan_used: Default::default(),
            scan_in_flight: Default::default(),
            scan_hold: Default::default(),
            timed_out: Default::default(),
            abandoned: Default::default(),
            fire: Default::default(),
            sweep_release: Default::default(),
            advance: Default::default(),
            scan_next: Default::default(),
            start_abandon: Default::default(),
            address_byte: Default::default(),
            own_select: Default::default(),
            chosen_select: Default::default(),
            completion_select: Default::default(),
            scan_select: Default::default(),
            set_bit: Default::default(),
            own_picks: std::array::from_fn(|_| Default::default()),
            chosen_picks: std::array::from_fn(|_| Default::default()),
            completion_picks: std::array::from_fn(|_| Default::default()),
            scan_picks: std::array::from_fn(|_| Default::default()),
            completion_bit: Default::default(),
            sweep_bit: Default::default(),
            flags: std::array::from_fn(|_| Default::default()),
        }
    }
}

impl Logic for OutstandingTable {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            next,
            count,
            scan,
            scan_stale,
            sweeping_abandon,
            abandon_target,
            abandon_left,
            lookup_valid,
            lookup_hit,
            finishing,
            finishing_tag,
            error_held,
            error0,
            error1,
            error2
        );
        for w in 0..FLAG_WORDS {
            self.used[w].clock.next = self.clock.val();
        }

        // A word of flags is picked by OR-ing the words a one-hot select
        // lets through, each masked on its own: a chain of `if`s on the
        // index synthesizes as a 32-deep priority mux.
        // Allocation: the first free entry at or after `next`, round-robin
        // (weft-model's `OutstandingTable::allocate`). Its own word's free
        // entries at or after `next`, else the first later word with a free
        // entry, else the first word from 0 on (its own word again at worst,
        // whose free entries then all lie before `next`).
        self.word_free.next = 0.into();
        self.start_word.next = self.next.q.val().get_bits::<FLAG_WORD_BITS>(5);
        self.own_word.next = 0.into();
        self.own_select.next = bits::<32>(1) << self.start_word.val();
        for w in 0..FLAG_WORDS {
            self.word_free.next = self
                .word_free
                .val()
                .replace_bit(w, self.used[w].q.val() != self.all_used.val());
            self.own_picks[w].next = 0.into();
            if self.own_select.val().get_bit(w) {
                self.own_picks[w].next = self.used[w].q.val();
            }
            self.own_word.next = self.own_word.val() | self.own_picks[w].val();
        }
        self.own_free.bits.next = !self.own_word.val()
            & (self.all_used.val() << self.next.q.val().get_bits::<FLAG_WORD_BITS>(0));
        self.later_words.next =
            self.word_free.val() & ((self.all_used.val() << self.start_word.val()) << 1);
        self.later_word.bits.next = self.later_words.val();
        self.wrapped_word.bits.next = self.word_free.val();
        self.chosen_word.next = self.wrapped_word.index.val();
        if self.later_word.any.val() {
            self.chosen_word.next = self.later_word.index.val();
        }
        self.chosen_used.next = 0.into();
        self.chosen_select.next = bits::<32>(1) << self.chosen_word.val();
        for w in 0..FLAG_WORDS {
            self.chosen_picks[w].next = 0.into();
            if self.chosen_select.val().get_bit(w) {
                self.chosen_picks[w].next = self.used[w].q.val();
            }
            self.chosen_used.next = self.chosen_used.val() | self.chosen_picks[w].val();
        }
        self.chosen_free.bits.next = !self.chosen_used.val();
        self.candidate.next = (bit_cast::<TAG_BITS, FLAG_WORD_BITS>(self.chosen_word.val()) << 5)
            | bit_cast::<TAG_BITS, FLAG_WORD_BITS>(self.chosen_free.index.val());
        if self.own_free.any.val() {
            self.candidate.next = (bit_cast::<TAG_BITS, FLAG_WORD_BITS>(self.start_word.val())
                << 5)
                | bit_cast::<TAG_BITS, FLAG_WORD_BITS>(self.own_free.index.val());
        }
        self.available.next = self.wrapped_word.any.val() && !self.sweeping_abandon.q.val();
        self.fabric_tag.next = self.candidate.val();
        self.allocate.next = self.request.val() && self.available.val();
        if self.allocate.val() {
            self.next.d.next = self.candidate.val() + 1;
        }

        // The entry, written where the request's tag points.
        self.host_ids.write_clock.next = self.clock.val();
        self.headers0.write_clock.next = self.clock.val();
        self.headers1.write_clock.next = self.clock.val();
        self.routes.write_clock.next = self.clock.val();
        self.issued.write_clock.next = self.clock.val();
        self.host_ids.write_address.next = self.candidate.val();
        self.headers0.write_address.next = self.candidate.val();
        self.headers1.write_address.next = self.candidate.val();
        self.routes.write_address.next = self.candidate.val();
        self.issued.write_address.next = self.candidate.val();
        self.host_ids.write_enable.next = self.allocate.val();
        self.headers0.write_enable.next = self.allocate.val();
        self.headers1.write_enable.next = self.allocate.val();
        self.routes.write_enable.next = self.allocate.val();
        self.issued.write_enable.next = self.allocate.val();
        // Requester ID in DW1[31:16], T9 (DW0 bit 23), T8 (DW0 bit 19), Tag[7:0] in DW1[15:8] (§2.2.6.2).
        self.host_ids.write_data.next =
            (bit_cast::<HOST_ID_BITS, 16>(self.request_dw1.val().get_bits::<16>(16)) << 10)
                | (bit_cast::<HOST_ID_BITS, 1>(self.request_dw0.val().get_bit(23).into()) << 9)
                | (bit_cast::<HOST_ID_BITS, 1>(self.request_dw0.val().get_bit(19).into()) << 8)
                | bit_cast::<HOST_ID_BITS, 8>(self.request_dw1.val().get_bits::<8>(8));
        self.headers0.write_data.next = self.request_dw0.val();
        self.headers1.write_data.next = self.request_dw1.val();
        // The low address byte (Fmt[0] picks the 4 DW header's DW3), the CPU flag, the port.
        self.address_byte.next = self.request_dw2.val().get_bits::<8>(0);
        if self.request_dw0.val().get_bit(29) {
            self.address_byte.next = self.request_dw3.val().get_bits::<8>(0);
        }
        self.routes.write_data.next = (bit_cast::<ROUTE_BITS, 8>(self.address_byte.val()) << 9)
            | (bit_cast::<ROUTE_BITS, 1>(self.request_cpu.val().into()) << 8)
            | bit_cast::<ROUTE_BITS, PORT_BITS>(self.request_port.val());
        self.issued.write_data.next = self.now.val();

        // Completion lookup: T9 (DW0 bit 23), T8 (DW0 bit 19), Tag[7:0] in DW2[15:8].
        self.completion_tag.next =
            (bit_cast::<TAG_BITS, 1>(self.completion_dw0.val().get_bit(23).into()) << 9)
                | (bit_cast::<TAG_BITS, 1>(self.completion_dw0.val().get_bit(19).into()) << 8)
                | bit_cast::<TAG_BITS, 8>(self.completion_dw2.val().get_bits::<8>(8));
        self.completion_used.next = 0.into();
        self.completion_select.next =
            bits::<32>(1) << self.completion_tag.val().get_bits::<FLAG_WORD_BITS>(5);
        for w in 0..FLAG_WORDS {
            self.completion_picks[w].next = 0.into();
            if self.completion_select.val().get_bit(w) {
                self.completion_picks[w].next = self.used[w].q.val();
            }
            self.completion_used.next = self.completion_used.val() | self.completion_picks[w].val();
        }
        self.completion_hit.next = self.completion.val()
            && (self.completion_dw2.val().get_bits::<ID_BITS>(16) == self.proxy_id.val())
            && self.completion_used.val().get_bit(
                self.completion_tag
                    .val()
                    .get_bits::<FLAG_WORD_BITS>(0)
                    .index(),
            );
        // §2.3.1.1: the last completion's data covers the Byte Count left
        // (0 encodes 4096 bytes, a Length of 0 1024 DW, §2.2.9.1, §2.2.1).
        self.completion_bytes.next =
            bit_cast::<13, 12>(self.completion_dw1.val().get_bits::<12>(0))
                + bit_cast::<13, 2>(self.completion_dw2.val().get_bits::<2>(0));
        if !self.completion_dw1.val().get_bits::<12>(0).any() {
            self.completion_bytes.next =
                bits::<13>(4096) + bit_cast::<13, 2>(self.completion_dw2.val().get_bits::<2>(0));
        }
        self.completion_data_bytes.next =
            bit_cast::<13, 10>(self.completion_dw0.val().get_bits::<10>(0)) << 2;
        if !self.completion_dw0.val().get_bits::<10>(0).any() {
            self.completion_data_bytes.next = bits::<13>(4096);
        }
        self.completion_last.next = !self.completion_dw0.val().get_bit(30)
            || (self.completion_bytes.val() <= self.completion_data_bytes.val());
        self.completion_release.next = self.completion_hit.val() && self.completion_last.val();
        // The finishing completion's entry is freed as its last beat passes, unless void.
        self.finished.next =
            self.finishing.q.val() && self.completion_end.val() && !self.completion_void.val();
        if self.completion_end.val() {
            self.finishing.d.next = false;
        }
        if self.completion_release.val() {
            self.finishing.d.next = true;
            self.finishing_tag.d.next = self.completion_tag.val();
        }
        self.host_ids.read_clock.next = self.clock.val();
        self.host_ids.read_address.next = self.completion_tag.val();
        self.lookup_valid.d.next = self.completion.val();
        self.lookup_hit.d.next = self.completion_hit.val();
        self.looked_up.next = self.lookup_valid.q.val();
        self.matched.next = self.lookup_hit.q.val();
        self.host_requester.next = self.host_ids.read_data.val().get_bits::<ID_BITS>(10);
        self.host_tag.next = self.host_ids.read_data.val().get_bits::<TAG_BITS>(0);

        // The sweep: the entry `scan` is on the RAMs' outputs. It waits a
        // cycle when that data is stale (the entry was written as it was
        // read), when a completion looks the entry up now, and when its
        // error completion cannot be presented.
        self.scan_used.next = 0.into();
        self.scan_select.next = bits::<32>(1) << self.scan.q.val().get_bits::<FLAG_WORD_BITS>(5);
        for w in 0..FLAG_WORDS {
            self.scan_picks[w].next = 0.into();
            if self.scan_select.val().get_bit(w) {
                self.scan_picks[w].next = self.used[w].q.val();
            }
            self.scan_used.next = self.scan_used.val() | self.scan_picks[w].val();
        }
        self.scan_in_flight.next = self
            .scan_used
            .val()
            .get_bit(self.scan.q.val().get_bits::<FLAG_WORD_BITS>(0).index());
        self.timed_out.next = (self.now.val() - self.issued.read_data.val()) >= self.timeout.val();
        self.abandoned.next = self.sweeping_abandon.q.val()
            && !self.routes.read_data.val().get_bit(8)
            && (self.routes.read_data.val().get_bits::<PORT_BITS>(0)
                == self.abandon_target.q.val());
        self.fire.next =
            self.scan_in_flight.val() && (self.timed_out.val() || self.abandoned.val());
        self.scan_hold.next = self.scan_stale.q.val()
            || (self.completion.val() && (self.completion_tag.val() == self.scan.q.val()))
            || (self.finishing.q.val() && (self.finishing_tag.q.val() == self.scan.q.val()))
            || (self.fire.val() && self.error_held.q.val() && !self.error_ready.val());
        self.sweep_release.next = self.fire.val() && !self.scan_hold.val();
        self.advance.next = !self.scan_hold.val();
        self.scan_next.next = self.scan.q.val();
        if self.advance.val() {
            self.scan_next.next = self.scan.q.val() + 1;
        }
        self.scan.d.next = self.scan_next.val();
        self.scan_stale.d.next =
            self.allocate.val() && (self.candidate.val() == self.scan_next.val());
        self.headers0.read_clock.next = self.clock.val();
        self.headers1.read_clock.next = self.clock.val();
        self.routes.read_clock.next = self.clock.val();
        self.issued.read_clock.next = self.clock.val();
        self.headers0.read_address.next = self.scan_next.val();
        self.headers1.read_address.next = self.scan_next.val();
        self.routes.read_address.next = self.scan_next.val();
        self.issued.read_address.next = self.scan_next.val();

        // The error completion of the swept entry, from its stored header.
        self.answer.dropped.next = true;
        self.answer.drop_reason.next = self.answered_reason.val();
        self.answer.unsettled.next = false;
        self.answer.dw0.next = self.headers0.read_data.val();
        self.answer.dw1.next = self.headers1.read_data.val();
        self.answer.dw2.next = bit_cast::<32, 8>(self.routes.read_data.val().get_bits::<8>(9));
        self.answer.dw3.next = bit_cast::<32, 8>(self.routes.read_data.val().get_bits::<8>(9));
        self.answer.completer_id.next = self.completer_id.val();
        self.answer.status.next = self.completer_abort.val();
        if self.abandoned.val() {
            self.answer.status.next = self.unsupported_request.val();
        }
        if self.error_ready.val() {
            self.error_held.d.next = false;
        }
        if self.sweep_release.val() {
            self.error_held.d.next = true;
            self.error0.d.next = self.answer.completion_dw0.val();
            self.error1.d.next = self.answer.completion_dw1.val();
            self.error2.d.next = self.answer.completion_dw2.val();
        }
        self.error_valid.next = self.error_held.q.val();
        self.error_dw0.next = self.error0.q.val();
        self.error_dw1.next = self.error1.q.val();
        self.error_dw2.next = self.error2.q.val();

        // Abandon: one whole pass of the sweep from the next entry it visits.
        self.abandoning.next = self.sweeping_abandon.q.val();
        self.start_abandon.next = self.abandon.val() && !self.sweeping_abandon.q.val();
        if self.start_abandon.val() {
            self.sweeping_abandon.d.next = true;
            self.abandon_target.d.next = self.abandon_port.val();
            self.abandon_left.d.next = self.all_entries.val();
        }
        if self.sweeping_abandon.q.val() && self.advance.val() {
            self.abandon_left.d.next = self.abandon_left.q.val() - 1;
            if self.abandon_left.q.val() == 1 {
                self.sweeping_abandon.d.next = false;
            }
        }

        // The in-flight flags and their count: the three entries set and
        // cleared in one cycle are distinct (only a free entry is taken,
        // and the sweep waits while a completion looks its entry up or is
        // finishing it). Each
        // bit within a word is decoded once and shared by the 32 words.
        self.set_bit.next = bits::<32>(1) << self.candidate.val().get_bits::<FLAG_WORD_BITS>(0);
        self.completion_bit.next =
            bits::<32>(1) << self.finishing_tag.q.val().get_bits::<FLAG_WORD_BITS>(0);
        self.sweep_bit.next = bits::<32>(1) << self.scan.q.val().get_bits::<FLAG_WORD_BITS>(0);
        for w in 0..FLAG_WORDS {
            self.flags[w].next = self.used[w].q.val();
            if self.allocate.val()
                && (self.candidate.val().get_bits::<FLAG_WORD_BITS>(5).index() == w)
            {
                self.flags[w].next = self.flags[w].val() | self.set_bit.val();
            }
            if self.finished.val()
                && (self
                    .finishing_tag
                    .q
                    .val()
                    .get_bits::<FLAG_WORD_BITS>(5)
                    .index()
                    == w)
            {
                self.flags[w].next = self.flags[w].val() & !self.completion_bit.val();
            }
            if self.sweep_release.val()
                && (self.scan.q.val().get_bits::<FLAG_WORD_BITS>(5).index() == w)
            {
                self.flags[w].next = self.flags[w].val() & !self.sweep_bit.val();
            }
            self.used[w].d.next = self.flags[w].val();
        }
        self.count.d.next = self.count.q.val()
            + bit_cast::<COUNT_BITS, 1>(self.allocate.val().into())
            - bit_cast::<COUNT_BITS, 1>(self.finished.val().into())
            - bit_cast::<COUNT_BITS, 1>(self.sweep_release.val().into());
        self.in_flight.next = self.count.q.val();
    }
}
