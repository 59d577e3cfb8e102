//! A port's own registers (`weft_regs::csr::port`): its role and the identities its translation uses.
//!
//! CONTROL, HOST, OWNER, BUSES and COMPLETER_ID are read-write and read
//! back their defined bits only, as weft-model's `CsrWindow` stores them;
//! ABANDON is write-only and reads 0. LINK is write-only and reads 0: a
//! write with HOT_RESET set raises `link_hot_reset`, else one with RETRAIN
//! set raises `link_retrain`, for the one cycle after the clock edge that
//! takes it (each bit set acts once; a hot reset trains the link again
//! anyway, so it wins, as in the model). A write of ABANDON raises
//! `abandon` for that cycle with the HOST_PORTS written on
//! `abandon_host_ports`: the host ports whose outstanding-request tables
//! complete their requests routed out of this port
//! ([`crate::top::SwitchTop`]). A write takes effect at the clock edge
//! that takes it; a read answers one cycle later (`crate::csr`).

use rust_hdl::prelude::*;
use weft_regs::csr::port;

use crate::csr::{CsrDecoder, CsrTarget, WORD_BITS};
use crate::tables::id_map::ID_BITS;
use crate::translate::endpoint_ingress::{HOST_BITS, SWIZZLE_BITS};

/// Bits of CONTROL.ROLE.
pub const ROLE_BITS: usize = 2;
const _: () = assert!(port::ROLE.width as usize == ROLE_BITS);
const _: () = assert!(port::HOST_INDEX.width as usize == HOST_BITS);
const _: () = assert!(port::OWNER_HOST_INDEX.width as usize == HOST_BITS);
const _: () = assert!(port::HOST_PROXY_ID.width as usize == ID_BITS);
const _: () = assert!(port::OWNER_PROXY_ID.width as usize == ID_BITS);
const _: () = assert!(port::BUSES_FIRST.width == 8 && port::BUSES_LAST.width == 8);
const _: () = assert!(port::INTX_SWIZZLE.width as usize >= SWIZZLE_BITS);

/// The registers of one port, decoded from `weft_regs::csr::port`.
#[derive(LogicBlock)]
pub struct PortRegisters {
    /// The clock.
    pub clock: Signal<In, Clock>,
    /// Programming and read-back.
    pub csr: CsrTarget,
    /// CONTROL.ENABLE.
    pub enable: Signal<Out, Bit>,
    /// CONTROL.ROLE: `port::ROLE_DISABLED` .. `port::ROLE_FABRIC`.
    pub role: Signal<Out, Bits<ROLE_BITS>>,
    /// CONTROL.SETTLED: the fabric manager has settled the port's role.
    pub settled: Signal<Out, Bit>,
    /// CONTROL.P2P_REQUEST_REDIRECT.
    pub p2p_request_redirect: Signal<Out, Bit>,
    /// CONTROL.RETURN_TO_INGRESS: an endpoint port sends peer traffic routed back to it out of it again.
    pub return_to_ingress: Signal<Out, Bit>,
    /// CONTROL.INTX_SWIZZLE modulo 4: the pin moves by the device number modulo 4 (§2.2.8.1).
    pub intx_swizzle: Signal<Out, Bits<SWIZZLE_BITS>>,
    /// HOST.INDEX.
    pub host_index: Signal<Out, Bits<HOST_BITS>>,
    /// HOST.PROXY_ID.
    pub proxy_id: Signal<Out, Bits<ID_BITS>>,
    /// OWNER.BOUND.
    pub owner_bound: Signal<Out, Bit>,
    /// OWNER.HOST_INDEX.
    pub owner_host: Signal<Out, Bits<HOST_BITS>>,
    /// OWNER.PROXY_ID.
    pub owner_proxy_id: Signal<Out, Bits<ID_BITS>>,
    /// BUSES.FIRST.
    pub bus_first: Signal<Out, Bits<8>>,
    /// BUSES.LAST.
    pub bus_last: Signal<Out, Bits<8>>,
    /// COMPLETER_ID.
    pub completer_id: Signal<Out, Bits<ID_BITS>>,
    /// A one-cycle pulse: LINK.HOT_RESET was written 1 at the last clock edge.
    pub link_hot_reset: Signal<Out, Bit>,
    /// A one-cycle pulse: LINK.RETRAIN (without HOT_RESET) was written 1 at the last clock edge.
    pub link_retrain: Signal<Out, Bit>,
    /// A one-cycle pulse: ABANDON was written at the last clock edge.
    pub abandon: Signal<Out, Bit>,
    /// With `abandon`: ABANDON.HOST_PORTS as written, port 0 in bit 0.
    pub abandon_host_ports: Signal<Out, Bits<32>>,
    decoder: CsrDecoder,
    control: DFF<Bits<32>>,
    host: DFF<Bits<32>>,
    owner: DFF<Bits<32>>,
    buses: DFF<Bits<32>>,
    completer: DFF<Bits<32>>,
    read_data: DFF<Bits<32>>,
    read_valid: DFF<Bit>,
    hot_reset: DFF<Bit>,
    retrain: DFF<Bit>,
    abandoning: DFF<Bit>,
    abandon_written: DFF<Bits<32>>,
    word_control: Constant<Bits<WORD_BITS>>,
    word_host: Constant<Bits<WORD_BITS>>,
    word_owner: Constant<Bits<WORD_BITS>>,
    word_buses: Constant<Bits<WORD_BITS>>,
    word_completer: Constant<Bits<WORD_BITS>>,
    word_abandon: Constant<Bits<WORD_BITS>>,
    word_link: Constant<Bits<WORD_BITS>>,
    mask_control: Constant<Bits<32>>,
    mask_host: Constant<Bits<32>>,
    mask_owner: Constant<Bits<32>>,
    mask_buses: Constant<Bits<32>>,
    mask_completer: Constant<Bits<32>>,
    mask_abandon: Constant<Bits<32>>,
    enable_bit: Constant<Bits<8>>,
    role_lsb: Constant<Bits<8>>,
    settled_bit: Constant<Bits<8>>,
    redirect_bit: Constant<Bits<8>>,
    return_bit: Constant<Bits<8>>,
    swizzle_lsb: Constant<Bits<8>>,
    host_index_lsb: Constant<Bits<8>>,
    proxy_lsb: Constant<Bits<8>>,
    bound_bit: Constant<Bits<8>>,
    owner_host_lsb: Constant<Bits<8>>,
    owner_proxy_lsb: Constant<Bits<8>>,
    first_lsb: Constant<Bits<8>>,
    last_lsb: Constant<Bits<8>>,
    hot_reset_bit: Constant<Bits<8>>,
    retrain_bit: Constant<Bits<8>>,
}

impl PortRegisters {
    /// The registers of port `port`.
    ///
    /// # Panics
    ///
    /// If the register map has no such port.
    pub fn new(instance: u32) -> Self {
        assert!(instance < port::LAYOUT.instances, "no such port");
        let word = |r: weft_regs::Register| Constant::new(r.word().to_bits());
        let mask = |r: weft_regs::Register| Constant::new(r.mask().to_bits());
        let lsb = |f: weft_regs::Field| Constant::new(f.lsb.to_bits());
        PortRegisters {
            clock: Default::default(),
            csr: Default::default(),
            enable: Default::default(),
            role: Default::default(),
            settled: Default::default(),
            p2p_request_redirect: Default::default(),
            return_to_ingress: Default::default(),
            intx_swizzle: Default::default(),
            host_index: Default::default(),
            proxy_id: Default::default(),
            owner_bound: Default::default(),
            owner_host: Default::default(),
            owner_proxy_id: Default::default(),
            bus_first: Default::default(),
            bus_last: Default::default(),
            completer_id: Default::default(),
            link_hot_reset: Default::default(),
            link_retrain: Default::default(),
            abandon: Default::default(),
            abandon_host_ports: Default::default(),
            decoder: CsrDecoder::new(&port::LAYOUT, instance),
            control: Default::default(),
            host: Default::default(),
            owner: Default::default(),
            buses: Default::default(),
            completer: Default::default(),
            read_data: Default::default(),
            read_valid: Default::default(),
            hot_reset: Default::default(),
            retrain: Default::default(),
            abandoning: Default::default(),
            abandon_written: Default::default(),
            word_control: word(port::CONTROL),
            word_host: word(port::HOST),
            word_owner: word(port::OWNER),
            word_buses: word(port::BUSES),
            word_completer: word(port::COMPLETER_ID),
            word_abandon: word(port::ABANDON),
            word_link: word(port::LINK),
            mask_control: mask(port::CONTROL),
            mask_host: mask(port::HOST),
            mask_owner: mask(port::OWNER),
            mask_buses: mask(port::BUSES),
            mask_completer: mask(port::COMPLETER_ID),
            mask_abandon: mask(port::ABANDON),
            enable_bit: lsb(port::ENABLE),
            role_lsb: lsb(port::ROLE),
            settled_bit: lsb(port::SETTLED),
            redirect_bit: lsb(port::P2P_REQUEST_REDIRECT),
            return_bit: lsb(port::RETURN_TO_INGRESS),
            swizzle_lsb: lsb(port::INTX_SWIZZLE),
            host_index_lsb: lsb(port::HOST_INDEX),
            proxy_lsb: lsb(port::HOST_PROXY_ID),
            bound_bit: lsb(port::OWNER_BOUND),
            owner_host_lsb: lsb(port::OWNER_HOST_INDEX),
            owner_proxy_lsb: lsb(port::OWNER_PROXY_ID),
            first_lsb: lsb(port::BUSES_FIRST),
            last_lsb: lsb(port::BUSES_LAST),
            hot_reset_bit: lsb(port::LINK_HOT_RESET),
            retrain_bit: lsb(port::LINK_RETRAIN),
        }
    }
}

impl Logic for PortRegisters {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            control,
            host,
            owner,
            buses,
            completer,
            read_data,
            read_valid,
            hot_reset,
            retrain,
            abandoning,
            abandon_written
        );
        self.decoder.address.next = self.csr.address.val();

        // Writes: the defined bits of the register addressed; LINK's act once.
        self.hot_reset.d.next = false;
        self.retrain.d.next = false;
        self.abandoning.d.next = false;
        if self.csr.write.val() && self.decoder.selected.val() {
            if self.decoder.word.val() == self.word_abandon.val() {
                self.abandoning.d.next = true;
                self.abandon_written.d.next = self.csr.write_data.val() & self.mask_abandon.val();
            }
            if self.decoder.word.val() == self.word_control.val() {
                self.control.d.next = self.csr.write_data.val() & self.mask_control.val();
            }
            if self.decoder.word.val() == self.word_host.val() {
                self.host.d.next = self.csr.write_data.val() & self.mask_host.val();
            }
            if self.decoder.word.val() == self.word_owner.val() {
                self.owner.d.next = self.csr.write_data.val() & self.mask_owner.val();
            }
            if self.decoder.word.val() == self.word_buses.val() {
                self.buses.d.next = self.csr.write_data.val() & self.mask_buses.val();
            }
            if self.decoder.word.val() == self.word_completer.val() {
                self.completer.d.next = self.csr.write_data.val() & self.mask_completer.val();
            }
            if self.decoder.word.val() == self.word_link.val() {
                self.hot_reset.d.next = self
                    .csr
                    .write_data
                    .val()
                    .get_bit(self.hot_reset_bit.val().index());
                self.retrain.d.next = self
                    .csr
                    .write_data
                    .val()
                    .get_bit(self.retrain_bit.val().index())
                    & !self
                        .csr
                        .write_data
                        .val()
                        .get_bit(self.hot_reset_bit.val().index());
            }
        }

        // Reads: answered in the next cycle; ABANDON and LINK (write-only) read 0.
        self.read_valid.d.next = false;
        self.read_data.d.next = bits::<32>(0);
        if self.csr.read.val() && self.decoder.selected.val() {
            if self.decoder.word.val() == self.word_control.val() {
                self.read_valid.d.next = true;
                self.read_data.d.next = self.control.q.val();
            }
            if self.decoder.word.val() == self.word_host.val() {
                self.read_valid.d.next = true;
                self.read_data.d.next = self.host.q.val();
            }
            if self.decoder.word.val() == self.word_owner.val() {
                self.read_valid.d.next = true;
                self.read_data.d.next = self.owner.q.val();
            }
            if self.decoder.word.val() == self.word_buses.val() {
                self.read_valid.d.next = true;
                self.read_data.d.next = self.buses.q.val();
            }
            if self.decoder.word.val() == self.word_completer.val() {
                self.read_valid.d.next = true;
                self.read_data.d.next = self.completer.q.val();
            }
            if (self.decoder.word.val() == self.word_abandon.val())
                | (self.decoder.word.val() == self.word_link.val())
            {
                self.read_valid.d.next = true;
            }
        }
        self.csr.read_valid.next = self.read_valid.q.val();
        self.csr.read_data.next = self.read_data.q.val();

        self.enable.next = self.control.q.val().get_bit(self.enable_bit.val().index());
        self.role.next = self
            .control
            .q
            .val()
            .get_bits::<ROLE_BITS>(self.role_lsb.val().index());
        self.settled.next = self.control.q.val().get_bit(self.settled_bit.val().index());
        self.p2p_request_redirect.next = self
            .control
            .q
            .val()
            .get_bit(self.redirect_bit.val().index());
        self.return_to_ingress.next = self.control.q.val().get_bit(self.return_bit.val().index());
        self.intx_swizzle.next = self
            .control
            .q
            .val()
            .get_bits::<SWIZZLE_BITS>(self.swizzle_lsb.val().index());
        self.host_index.next = self
            .host
            .q
            .val()
            .get_bits::<HOST_BITS>(self.host_index_lsb.val().index());
        self.proxy_id.next = self
            .host
            .q
            .val()
            .get_bits::<ID_BITS>(self.proxy_lsb.val().index());
        self.owner_bound.next = self.owner.q.val().get_bit(self.bound_bit.val().index());
        self.owner_host.next = self
            .owner
            .q
            .val()
            .get_bits::<HOST_BITS>(self.owner_host_lsb.val().index());
        self.owner_proxy_id.next = self
            .owner
            .q
            .val()
            .get_bits::<ID_BITS>(self.owner_proxy_lsb.val().index());
        self.bus_first.next = self
            .buses
            .q
            .val()
            .get_bits::<8>(self.first_lsb.val().index());
        self.bus_last.next = self
            .buses
            .q
            .val()
            .get_bits::<8>(self.last_lsb.val().index());
        self.completer_id.next = self.completer.q.val().get_bits::<ID_BITS>(0);
        self.link_hot_reset.next = self.hot_reset.q.val();
        self.link_retrain.next = self.retrain.q.val();
        self.abandon.next = self.abandoning.q.val();
        self.abandon_host_ports.next = self.abandon_written.q.val();
    }
}
