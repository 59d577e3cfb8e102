//! The function owner table: an endpoint port's functions bound one by one, by requester ID.
//!
//! Endpoint ingress asks for the owner of a requester ID (weft-model's
//! `PortTables::ownership`): the first valid entry whose function matches
//! answers with its owner host, the owner's proxy ID and its slot's
//! controls; a function without an entry falls back to the port's owner,
//! which is the ingress stage's to apply. A second lookup answers only
//! whether another function has an entry and its owner host: a completion
//! between two functions of one owner is told by both IDs' owners. The
//! lookups are combinational, and a CSR write reaches them from the next
//! clock edge.

use rust_hdl::prelude::*;
use weft_regs::csr::function_owner;

use crate::csr::{CsrTarget, WORD_BITS};
use crate::tables::front::TableCsr;
use crate::tables::id_map::ID_BITS;
use crate::translate::endpoint_ingress::{HOST_BITS, SWIZZLE_BITS};

/// An endpoint port's function owner table of `N` entries, programmed over the CSR bus.
///
/// Entry `e` is `weft_regs::csr::function_owner` entry `e` of the port
/// given to [`FunctionOwnerTable::new`] (held in slot `N - 1 - e`, see [`TableCsr`]).
#[derive(LogicBlock)]
pub struct FunctionOwnerTable<const N: usize> {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Programming and read-back.
    pub csr: CsrTarget,
    /// The requester ID looked up.
    pub requester: Signal<In, Bits<ID_BITS>>,
    /// A valid entry has `requester` as its function.
    pub found: Signal<Out, Bit>,
    /// The first such entry's owner host.
    pub host: Signal<Out, Bits<HOST_BITS>>,
    /// Its owner's proxy ID.
    pub proxy_id: Signal<Out, Bits<ID_BITS>>,
    /// ACS P2P Request Redirect of its slot.
    pub p2p_request_redirect: Signal<Out, Bit>,
    /// Its slot's device number modulo 4.
    pub intx_swizzle: Signal<Out, Bits<SWIZZLE_BITS>>,
    /// A second function ID looked up, for its owner host only.
    pub other: Signal<In, Bits<ID_BITS>>,
    /// A valid entry has `other` as its function.
    pub other_found: Signal<Out, Bit>,
    /// The first such entry's owner host.
    pub other_host: Signal<Out, Bits<HOST_BITS>>,
    front: TableCsr,
    functions: [DFF<Bits<32>>; N],
    owners: [DFF<Bits<32>>; N],
    controls: [DFF<Bits<32>>; N],
    word_function: Constant<Bits<WORD_BITS>>,
    word_owner: Constant<Bits<WORD_BITS>>,
    word_control: Constant<Bits<WORD_BITS>>,
    function_mask: Constant<Bits<32>>,
    owner_mask: Constant<Bits<32>>,
    control_mask: Constant<Bits<32>>,
}

impl<const N: usize> FunctionOwnerTable<N> {
    /// The function owner table of port `port`, answering that port's registers.
    ///
    /// # Panics
    ///
    /// If `N` is zero or more than the register map's entries per port, or the port does not exist.
    pub fn new(port: u32) -> Self {
        let word = |register: &weft_regs::Register| Constant::new(register.word().to_bits());
        let mask = |register: &weft_regs::Register| Constant::new(register.mask().to_bits());
        FunctionOwnerTable {
            clock: Default::default(),
            csr: Default::default(),
            requester: Default::default(),
            found: Default::default(),
            host: Default::default(),
            proxy_id: Default::default(),
            p2p_request_redirect: Default::default(),
            intx_swizzle: Default::default(),
            other: Default::default(),
            other_found: Default::default(),
            other_host: Default::default(),
            front: TableCsr::new(&function_owner::LAYOUT, port, N),
            functions: std::array::from_fn(|_| Default::default()),
            owners: std::array::from_fn(|_| Default::default()),
            controls: std::array::from_fn(|_| Default::default()),
            word_function: word(&function_owner::FUNCTION),
            word_owner: word(&function_owner::OWNER),
            word_control: word(&function_owner::CONTROL),
            function_mask: mask(&function_owner::FUNCTION),
            owner_mask: mask(&function_owner::OWNER),
            control_mask: mask(&function_owner::CONTROL),
        }
    }
}

// The field positions the lookup reads, as the register map defines them.
const _: () = assert!(function_owner::FUNCTION.fields[0].lsb == 0);
const _: () = assert!(function_owner::HOST_INDEX.lsb == 0);
const _: () = assert!(function_owner::PROXY_ID.lsb == 16);
const _: () = assert!(function_owner::VALID.lsb == 0);
const _: () = assert!(function_owner::P2P_REQUEST_REDIRECT.lsb == 8);
const _: () = assert!(function_owner::INTX_SWIZZLE.lsb == 16);

impl<const N: usize> Logic for FunctionOwnerTable<N> {
    #[hdl_gen]
    fn update(&mut self) {
        self.front.clock.next = self.clock.val();
        CsrTarget::link(&mut self.csr, &mut self.front.csr);
        self.front.read_value.next = bits::<32>(0);

        self.found.next = false;
        self.host.next = bits::<HOST_BITS>(0);
        self.proxy_id.next = bits::<ID_BITS>(0);
        self.p2p_request_redirect.next = false;
        self.intx_swizzle.next = bits::<SWIZZLE_BITS>(0);
        self.other_found.next = false;
        self.other_host.next = bits::<HOST_BITS>(0);
        for i in 0..N {
            self.functions[i].clock.next = self.clock.val();
            self.owners[i].clock.next = self.clock.val();
            self.controls[i].clock.next = self.clock.val();
            self.functions[i].d.next = self.functions[i].q.val();
            self.owners[i].d.next = self.owners[i].q.val();
            self.controls[i].d.next = self.controls[i].q.val();
            if self.front.writing.val() && (self.front.slot.val().index() == i) {
                if self.front.word.val() == self.word_function.val() {
                    self.functions[i].d.next = self.front.data.val();
                }
                if self.front.word.val() == self.word_owner.val() {
                    self.owners[i].d.next = self.front.data.val();
                }
                if self.front.word.val() == self.word_control.val() {
                    self.controls[i].d.next = self.front.data.val();
                }
            }
            if self.front.slot.val().index() == i {
                if self.front.word.val() == self.word_function.val() {
                    self.front.read_value.next =
                        self.functions[i].q.val() & self.function_mask.val();
                }
                if self.front.word.val() == self.word_owner.val() {
                    self.front.read_value.next = self.owners[i].q.val() & self.owner_mask.val();
                }
                if self.front.word.val() == self.word_control.val() {
                    self.front.read_value.next = self.controls[i].q.val() & self.control_mask.val();
                }
            }
            // The loop's last match is the lowest entry (slot N - 1 - e): first match wins.
            if self.controls[i].q.val().get_bit(0)
                && (self.functions[i].q.val().get_bits::<ID_BITS>(0) == self.requester.val())
            {
                self.found.next = true;
                self.host.next = self.owners[i].q.val().get_bits::<HOST_BITS>(0);
                self.proxy_id.next = self.owners[i].q.val().get_bits::<ID_BITS>(16);
                self.p2p_request_redirect.next = self.controls[i].q.val().get_bit(8);
                self.intx_swizzle.next = self.controls[i].q.val().get_bits::<SWIZZLE_BITS>(16);
            }
            if self.controls[i].q.val().get_bit(0)
                && (self.functions[i].q.val().get_bits::<ID_BITS>(0) == self.other.val())
            {
                self.other_found.next = true;
                self.other_host.next = self.owners[i].q.val().get_bits::<HOST_BITS>(0);
            }
        }
    }
}
