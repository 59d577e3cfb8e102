//! The ID map: a host port's bound functions, fabric ID to host ID and back.
//!
//! Host egress asks for the host ID of a fabric ID (weft-model's
//! `fabric_to_host`), host ingress for the fabric ID of a host ID
//! (`host_to_fabric`); each answer comes from the first valid entry whose
//! ID matches. Both lookups are combinational and independent, and a CSR
//! write reaches them from the next clock edge.

use rust_hdl::prelude::*;
use weft_regs::csr::id_map;

use crate::csr::{CsrTarget, WORD_BITS};
use crate::tables::front::TableCsr;

/// Bits of a requester or completer ID (PCIe Base 6.0 §2.2.6.2).
pub const ID_BITS: usize = 16;
const _: () = assert!(id_map::FABRIC_ID.fields[0].width as usize == ID_BITS);
const _: () = assert!(id_map::HOST_ID.fields[0].width as usize == ID_BITS);

/// A host port's ID map of `N` entries, programmed over the CSR bus.
///
/// Entry `e` is `weft_regs::csr::id_map` entry `e` of the port given to
/// [`IdMap::new`] (held in slot `N - 1 - e`, see [`TableCsr`]).
#[derive(LogicBlock)]
pub struct IdMap<const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Programming and read-back.
    pub csr: CsrTarget,
    /// A fabric ID to translate into the host's terms.
    pub fabric_query: Signal<In, Bits<ID_BITS>>,
    /// A valid entry has `fabric_query` as its fabric ID.
    pub host_found: Signal<Out, Bit>,
    /// The first such entry's host ID.
    pub host: Signal<Out, Bits<ID_BITS>>,
    /// A host ID to translate into the fabric's terms.
    pub host_query: Signal<In, Bits<ID_BITS>>,
    /// A valid entry has `host_query` as its host ID.
    pub fabric_found: Signal<Out, Bit>,
    /// The first such entry's fabric ID.
    pub fabric: Signal<Out, Bits<ID_BITS>>,
    front: TableCsr,
    fabric_ids: [DFF<Bits<32>>; N],
    host_ids: [DFF<Bits<32>>; N],
    controls: [DFF<Bits<32>>; N],
    word_fabric_id: Constant<Bits<WORD_BITS>>,
    word_host_id: Constant<Bits<WORD_BITS>>,
    word_control: Constant<Bits<WORD_BITS>>,
    fabric_id_mask: Constant<Bits<32>>,
    host_id_mask: Constant<Bits<32>>,
    control_mask: Constant<Bits<32>>,
    fabric_id_lsb: Constant<Bits<8>>,
    host_id_lsb: Constant<Bits<8>>,
    valid_bit: Constant<Bits<8>>,
}

impl<const N: usize> IdMap<N> {
    /// The ID map of port `port`, answering that port's ID map registers.
    ///
    /// # Panics
    ///
    /// If `N` is zero or more than the register map's entries per port, or the port does not exist.
    pub fn new(port: u32) -> Self {
        let word = |register: &weft_regs::Register| Constant::new(register.word().to_bits());
        let mask = |register: &weft_regs::Register| Constant::new(register.mask().to_bits());
        let lsb = |field: &weft_regs::Field| Constant::new(field.lsb.to_bits());
        IdMap {
            clock: Default::default(),
            csr: Default::default(),
            fabric_query: Default::default(),
            host_found: Default::default(),
            host: Default::default(),
            host_query: Default::default(),
            fabric_found: Default::default(),
            fabric: Default::default(),
            front: TableCsr::new(&id_map::LAYOUT, port, N),
            fabric_ids: std::array::from_fn(|_| Default::default()),
            host_ids: std::array::from_fn(|_| Default::default()),
            controls: std::array::from_fn(|_| Default::default()),
            word_fabric_id: word(&id_map::FABRIC_ID),
            word_host_id: word(&id_map::HOST_ID),
            word_control: word(&id_map::CONTROL),
            fabric_id_mask: mask(&id_map::FABRIC_ID),
            host_id_mask: mask(&id_map::HOST_ID),
            control_mask: mask(&id_map::CONTROL),
            fabric_id_lsb: lsb(&id_map::FABRIC_ID.fields[0]),
            host_id_lsb: lsb(&id_map::HOST_ID.fields[0]),
            valid_bit: lsb(&id_map::VALID),
        }
    }
}

impl<const N: usize> Logic for IdMap<N> {
    #[hdl_gen]
    fn update(&mut self) {
        self.front.clock.next = self.clock.val();
        CsrTarget::link(&mut self.csr, &mut self.front.csr);
        self.front.read_value.next = bits::<32>(0);

        self.host_found.next = false;
        self.host.next = bits::<ID_BITS>(0);
        self.fabric_found.next = false;
        self.fabric.next = bits::<ID_BITS>(0);
        for i in 0..N {
            self.fabric_ids[i].clock.next = self.clock.val();
            self.host_ids[i].clock.next = self.clock.val();
            self.controls[i].clock.next = self.clock.val();
            self.fabric_ids[i].d.next = self.fabric_ids[i].q.val();
            self.host_ids[i].d.next = self.host_ids[i].q.val();
            self.controls[i].d.next = self.controls[i].q.val();
            if self.front.writing.val() && (self.front.slot.val().index() == i) {
                if self.front.word.val() == self.word_fabric_id.val() {
                    self.fabric_ids[i].d.next = self.front.data.val();
                }
                if self.front.word.val() == self.word_host_id.val() {
                    self.host_ids[i].d.next = self.front.data.val();
                }
                if self.front.word.val() == self.word_control.val() {
                    self.controls[i].d.next = self.front.data.val();
                }
            }
            if self.front.slot.val().index() == i {
                if self.front.word.val() == self.word_fabric_id.val() {
                    self.front.read_value.next =
                        self.fabric_ids[i].q.val() & self.fabric_id_mask.val();
                }
                if self.front.word.val() == self.word_host_id.val() {
                    self.front.read_value.next = self.host_ids[i].q.val() & self.host_id_mask.val();
                }
                if self.front.word.val() == self.word_control.val() {
                    self.front.read_value.next = self.controls[i].q.val() & self.control_mask.val();
                }
            }
            if self.controls[i]
                .q
                .val()
                .get_bit(self.valid_bit.val().index())
            {
                if self.fabric_ids[i]
                    .q
                    .val()
                    .get_bits::<ID_BITS>(self.fabric_id_lsb.val().index())
                    == self.fabric_query.val()
                {
                    self.host_found.next = true;
                    self.host.next = self.host_ids[i]
                        .q
                        .val()
                        .get_bits::<ID_BITS>(self.host_id_lsb.val().index());
                }
                if self.host_ids[i]
                    .q
                    .val()
                    .get_bits::<ID_BITS>(self.host_id_lsb.val().index())
                    == self.host_query.val()
                {
                    self.fabric_found.next = true;
                    self.fabric.next = self.fabric_ids[i]
                        .q
                        .val()
                        .get_bits::<ID_BITS>(self.fabric_id_lsb.val().index());
                }
            }
        }
    }
}
