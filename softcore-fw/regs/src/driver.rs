//! The data plane's tables written through its CSR window: [`DataPlane`]
//! as register writes on a [`CsrBus`].
//!
//! The firmware puts its volatile loads and stores behind [`CsrBus`]; host
//! tests put a model of the CSR window there. Every address and field comes
//! from [`crate::csr`]. An entry that spans several registers is written
//! invalidate-first, validate-last (the map's rule for live entries), so
//! the data plane never looks a request up in a half-written entry.

use weft_pcie::Bdf;

use crate::capacity;
use crate::csr::{
    address_route, bus_route, counter, counter_control, destination, function_owner, global,
    id_map, port, window,
};
use crate::register::{Field, Register};
use crate::tables::{
    checked_completion_timeout, checked_counter_entry, checked_intx_swizzle, AddressRoute,
    DataPlane, Destination, FunctionOwner, HostIndex, IdMapping, LinkRequest, Owner, PortIndex,
    PortRole, TableWriteError, Window,
};

/// Whole-word accesses to the data plane's CSR window ([`crate::csr`]).
pub trait CsrBus {
    /// Reads the 32-bit register at byte address `address`.
    fn read32(&mut self, address: u32) -> u32;

    /// Writes `value` to the 32-bit register at byte address `address`.
    fn write32(&mut self, address: u32, value: u32);
}

impl<B: CsrBus + ?Sized> CsrBus for &mut B {
    fn read32(&mut self, address: u32) -> u32 {
        (**self).read32(address)
    }

    fn write32(&mut self, address: u32, value: u32) {
        (**self).write32(address, value)
    }
}

/// Why the data plane behind a bus is not one these drivers were built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdentityError {
    /// `global::ID` does not read "WEFT": no weft data plane answers there.
    NotWeft {
        /// What `global::ID` read.
        id: u32,
    },
    /// The register map's major version differs, or its minor version
    /// lacks registers these drivers write.
    Version {
        /// The data plane's major version.
        major: u32,
        /// The data plane's minor version.
        minor: u32,
    },
    /// A table's capacity differs from the one the firmware was built with
    /// (`crate::capacity`), so its indices would not match.
    Capacity {
        /// Which table.
        table: &'static str,
        /// Entries the data plane has.
        hardware: u32,
        /// Entries the firmware was built for (for ports: at most).
        firmware: u32,
    },
}

/// The data plane's tables as CSR writes on `B`.
pub struct CsrDataPlane<B> {
    bus: B,
    ports: u8,
}

/// Writes `value` to `register` of `(instance, entry)`.
fn write<B: CsrBus>(bus: &mut B, register: Register, instance: u32, entry: u32, value: u32) {
    bus.write32(register.address(instance, entry), value);
}

/// The two halves of a 64-bit value, low first.
fn halves(value: u64) -> (u32, u32) {
    (value as u32, (value >> 32) as u32)
}

/// A [`Bdf`]'s 16 bits, for an ID field.
fn id(bdf: Bdf) -> u32 {
    u32::from(bdf.0)
}

/// An ID register's value.
fn id_register(bdf: Bdf) -> u32 {
    crate::csr::ID.encode(id(bdf))
}

/// A host index as a `HOST_INDEX` field.
fn host_index(field: Field, host: HostIndex) -> u32 {
    field.encode(u32::from(host.0))
}

/// A routing destination as `destination::FIELDS`, valid.
fn destination_bits(to: Destination) -> u32 {
    destination::VALID.encode(1)
        | match to {
            Destination::Port(port) => destination::PORT.encode(u32::from(port.0)),
            Destination::Cpu => destination::CPU.encode(1),
        }
}

impl<B: CsrBus> CsrDataPlane<B> {
    /// The data plane behind `bus`, once its identity registers
    /// (`csr::global`) show a weft data plane of this register map with
    /// the table capacities of `crate::capacity`.
    pub fn new(mut bus: B) -> Result<Self, IdentityError> {
        let read = |bus: &mut B, register: Register| bus.read32(register.address(0, 0));
        let magic = global::MAGIC.decode(read(&mut bus, global::ID));
        if magic != global::ID_VALUE {
            return Err(IdentityError::NotWeft { id: magic });
        }
        let version = read(&mut bus, global::VERSION);
        let (major, minor) = (global::MAJOR.decode(version), global::MINOR.decode(version));
        if major != global::VERSION_MAJOR || minor < global::VERSION_MINOR {
            return Err(IdentityError::Version { major, minor });
        }
        let ports = global::PORT_COUNT.decode(read(&mut bus, global::PORTS));
        let port_tables = read(&mut bus, global::PORT_TABLES);
        let route_tables = read(&mut bus, global::ROUTE_TABLES);
        let owner_tables = read(&mut bus, global::OWNER_TABLES);
        let expected = [
            (
                "window",
                global::WINDOWS.decode(port_tables),
                capacity::WINDOWS_PER_PORT,
            ),
            (
                "ID map",
                global::ID_MAP_ENTRIES.decode(port_tables),
                capacity::BOUND_FUNCTIONS_PER_HOST,
            ),
            (
                "address route",
                global::ADDRESS_ROUTES.decode(route_tables),
                capacity::ADDRESS_ROUTES,
            ),
            (
                "bus route",
                global::BUS_ROUTES.decode(route_tables),
                capacity::BUS_ROUTES,
            ),
            (
                "function owner",
                global::FUNCTION_OWNERS.decode(owner_tables),
                capacity::FUNCTION_OWNERS_PER_PORT,
            ),
        ];
        for (table, hardware, firmware) in expected {
            if hardware as usize != firmware {
                return Err(IdentityError::Capacity {
                    table,
                    hardware,
                    firmware: firmware as u32,
                });
            }
        }
        if ports as usize > capacity::PORTS {
            return Err(IdentityError::Capacity {
                table: "port",
                hardware: ports,
                firmware: capacity::PORTS as u32,
            });
        }
        Ok(CsrDataPlane {
            bus,
            ports: ports as u8,
        })
    }

    /// The bus, for the registers this driver does not cover.
    pub fn bus(&mut self) -> &mut B {
        &mut self.bus
    }

    /// Gives the bus back.
    pub fn into_bus(self) -> B {
        self.bus
    }

    /// `port`'s register instance, if the data plane has it.
    fn instance(&self, port: PortIndex) -> Result<u32, TableWriteError> {
        if port.0 < self.ports {
            Ok(u32::from(port.0))
        } else {
            Err(TableWriteError::NoSuchPort(port))
        }
    }

    /// Port `instance`'s `CONTROL` with `field` replaced by `value`, written.
    fn update_port_control(&mut self, instance: u32, field: Field, value: u32) {
        let address = port::CONTROL.address(instance, 0);
        let control = self.bus.read32(address) & port::CONTROL.mask();
        self.bus
            .write32(address, (control & !field.mask()) | field.encode(value));
    }
}

/// `index` as an entry of `table`, if it holds `entries`.
fn entry_index(table: &'static str, index: usize, entries: usize) -> Result<u32, TableWriteError> {
    if index < entries {
        Ok(index as u32)
    } else {
        Err(TableWriteError::NoSuchEntry { table, index })
    }
}

impl<B: CsrBus> DataPlane for CsrDataPlane<B> {
    fn ports(&self) -> usize {
        usize::from(self.ports)
    }

    /// Disables the port, writes the role's identity registers, then
    /// enables the port in its new role: no TLP is ever translated with a
    /// role's half-written identity.
    fn set_port_role(&mut self, port: PortIndex, role: PortRole) -> Result<(), TableWriteError> {
        let p = self.instance(port)?;
        let role = role.checked()?;
        self.update_port_control(p, port::ENABLE, 0);
        let role_bits = match role {
            PortRole::Disabled => {
                self.update_port_control(p, port::ROLE, port::ROLE_DISABLED);
                return Ok(());
            }
            PortRole::Host { host, proxy_id } => {
                let bits =
                    host_index(port::HOST_INDEX, host) | port::HOST_PROXY_ID.encode(id(proxy_id));
                write(&mut self.bus, port::HOST, p, 0, bits);
                port::ROLE_HOST
            }
            PortRole::Endpoint { owner, buses } => {
                let bits = match owner {
                    Some(Owner { host, proxy_id }) => {
                        host_index(port::OWNER_HOST_INDEX, host)
                            | port::OWNER_BOUND.encode(1)
                            | port::OWNER_PROXY_ID.encode(id(proxy_id))
                    }
                    None => 0,
                };
                write(&mut self.bus, port::OWNER, p, 0, bits);
                let buses = port::BUSES_FIRST.encode(u32::from(buses.0))
                    | port::BUSES_LAST.encode(u32::from(buses.1));
                write(&mut self.bus, port::BUSES, p, 0, buses);
                port::ROLE_ENDPOINT
            }
            PortRole::Fabric => port::ROLE_FABRIC,
        };
        self.update_port_control(p, port::ROLE, role_bits);
        self.update_port_control(p, port::ENABLE, 1);
        Ok(())
    }

    fn set_port_settled(&mut self, port: PortIndex, settled: bool) -> Result<(), TableWriteError> {
        let p = self.instance(port)?;
        self.update_port_control(p, port::SETTLED, u32::from(settled));
        Ok(())
    }

    fn set_window(
        &mut self,
        port: PortIndex,
        index: usize,
        window: Window,
    ) -> Result<(), TableWriteError> {
        self.set_peer_window(port, index, window, None)
    }

    /// Clears VALID, writes the range, fabric base and owner tag, then sets
    /// VALID with the permissions; a zero-sized window is only cleared.
    fn set_peer_window(
        &mut self,
        port: PortIndex,
        index: usize,
        window: Window,
        owner: Option<HostIndex>,
    ) -> Result<(), TableWriteError> {
        let p = self.instance(port)?;
        let e = entry_index("window", index, capacity::WINDOWS_PER_PORT)?;
        if let Some(host) = owner {
            host.checked()?;
        }
        let window = window.checked()?;
        write(&mut self.bus, window::CONTROL, p, e, 0);
        if window.size == 0 {
            return Ok(());
        }
        for (low, high, value) in [
            (window::BASE_LOW, window::BASE_HIGH, window.base),
            (window::SIZE_LOW, window::SIZE_HIGH, window.size),
            (
                window::FABRIC_BASE_LOW,
                window::FABRIC_BASE_HIGH,
                window.fabric_base,
            ),
        ] {
            let (l, h) = halves(value);
            write(&mut self.bus, low, p, e, l);
            write(&mut self.bus, high, p, e, h);
        }
        let tag = owner.map_or(0, |host| {
            host_index(window::OWNER_HOST_INDEX, host) | window::OWNER_TAGGED.encode(1)
        });
        write(&mut self.bus, window::OWNER, p, e, tag);
        let control = window::VALID.encode(1)
            | window::READ.encode(u32::from(window.permissions.read))
            | window::WRITE.encode(u32::from(window.permissions.write));
        write(&mut self.bus, window::CONTROL, p, e, control);
        Ok(())
    }

    /// Clears VALID, writes the function and its owner, then sets VALID
    /// with the slot's controls.
    fn set_function_owner(
        &mut self,
        port: PortIndex,
        index: usize,
        entry: Option<FunctionOwner>,
    ) -> Result<(), TableWriteError> {
        let p = self.instance(port)?;
        let e = entry_index("function owner", index, capacity::FUNCTION_OWNERS_PER_PORT)?;
        let entry = entry.map(FunctionOwner::checked).transpose()?;
        write(&mut self.bus, function_owner::CONTROL, p, e, 0);
        let Some(entry) = entry else {
            return Ok(());
        };
        write(
            &mut self.bus,
            function_owner::FUNCTION,
            p,
            e,
            id_register(entry.function),
        );
        let owner = host_index(function_owner::HOST_INDEX, entry.owner.host)
            | function_owner::PROXY_ID.encode(id(entry.owner.proxy_id));
        write(&mut self.bus, function_owner::OWNER, p, e, owner);
        let control = function_owner::VALID.encode(1)
            | function_owner::P2P_REQUEST_REDIRECT.encode(u32::from(entry.p2p_request_redirect))
            | function_owner::INTX_SWIZZLE.encode(u32::from(entry.intx_swizzle));
        write(&mut self.bus, function_owner::CONTROL, p, e, control);
        Ok(())
    }

    /// Clears VALID, writes both IDs, then sets VALID.
    fn set_id_mapping(
        &mut self,
        port: PortIndex,
        index: usize,
        mapping: Option<IdMapping>,
    ) -> Result<(), TableWriteError> {
        let p = self.instance(port)?;
        let e = entry_index("ID map", index, capacity::BOUND_FUNCTIONS_PER_HOST)?;
        write(&mut self.bus, id_map::CONTROL, p, e, 0);
        let Some(mapping) = mapping else {
            return Ok(());
        };
        write(
            &mut self.bus,
            id_map::FABRIC_ID,
            p,
            e,
            id_register(mapping.fabric),
        );
        write(
            &mut self.bus,
            id_map::HOST_ID,
            p,
            e,
            id_register(mapping.host),
        );
        write(
            &mut self.bus,
            id_map::CONTROL,
            p,
            e,
            id_map::VALID.encode(1),
        );
        Ok(())
    }

    fn set_completer_id(&mut self, port: PortIndex, completer: Bdf) -> Result<(), TableWriteError> {
        let p = self.instance(port)?;
        write(
            &mut self.bus,
            port::COMPLETER_ID,
            p,
            0,
            id_register(completer),
        );
        Ok(())
    }

    fn set_p2p_request_redirect(
        &mut self,
        port: PortIndex,
        redirect: bool,
    ) -> Result<(), TableWriteError> {
        let p = self.instance(port)?;
        self.update_port_control(p, port::P2P_REQUEST_REDIRECT, u32::from(redirect));
        Ok(())
    }

    fn set_return_to_ingress(
        &mut self,
        port: PortIndex,
        enable: bool,
    ) -> Result<(), TableWriteError> {
        let p = self.instance(port)?;
        self.update_port_control(p, port::RETURN_TO_INGRESS, u32::from(enable));
        Ok(())
    }

    fn set_intx_swizzle(&mut self, port: PortIndex, swizzle: u8) -> Result<(), TableWriteError> {
        let p = self.instance(port)?;
        let swizzle = checked_intx_swizzle(swizzle)?;
        self.update_port_control(p, port::INTX_SWIZZLE, u32::from(swizzle));
        Ok(())
    }

    /// Clears DESTINATION's VALID, writes the range, then writes the destination, valid.
    fn set_address_route(
        &mut self,
        index: usize,
        route: Option<AddressRoute>,
    ) -> Result<(), TableWriteError> {
        let e = entry_index("address route", index, capacity::ADDRESS_ROUTES)?;
        let route = route.map(AddressRoute::checked).transpose()?;
        write(&mut self.bus, address_route::DESTINATION, 0, e, 0);
        let Some(route) = route else {
            return Ok(());
        };
        for (low, high, value) in [
            (
                address_route::BASE_LOW,
                address_route::BASE_HIGH,
                route.base,
            ),
            (
                address_route::SIZE_LOW,
                address_route::SIZE_HIGH,
                route.size,
            ),
        ] {
            let (l, h) = halves(value);
            write(&mut self.bus, low, 0, e, l);
            write(&mut self.bus, high, 0, e, h);
        }
        write(
            &mut self.bus,
            address_route::DESTINATION,
            0,
            e,
            destination_bits(route.to),
        );
        Ok(())
    }

    fn set_bus_route(&mut self, bus: u8, to: Option<Destination>) -> Result<(), TableWriteError> {
        let bits = to.map_or(0, destination_bits);
        write(
            &mut self.bus,
            bus_route::DESTINATION,
            0,
            u32::from(bus),
            bits,
        );
        Ok(())
    }

    fn abandon_requests_to(&mut self, port: PortIndex) -> Result<(), TableWriteError> {
        let p = self.instance(port)?;
        write(
            &mut self.bus,
            port::ABANDON,
            p,
            0,
            port::ABANDON_HOST_PORTS.mask(),
        );
        Ok(())
    }

    fn abandon_host_requests_to(
        &mut self,
        host_port: PortIndex,
        port: PortIndex,
    ) -> Result<(), TableWriteError> {
        let host = self.instance(host_port)?;
        let p = self.instance(port)?;
        let bits = port::ABANDON_HOST_PORTS.encode(1 << host);
        write(&mut self.bus, port::ABANDON, p, 0, bits);
        Ok(())
    }

    fn request_link(
        &mut self,
        port: PortIndex,
        request: LinkRequest,
    ) -> Result<(), TableWriteError> {
        let p = self.instance(port)?;
        let bits = match request {
            LinkRequest::HotReset => port::LINK_HOT_RESET.encode(1),
            LinkRequest::Retrain => port::LINK_RETRAIN.encode(1),
        };
        write(&mut self.bus, port::LINK, p, 0, bits);
        Ok(())
    }

    /// Reads `VALUE_LOW`, which captures the high half, then `VALUE_HIGH`:
    /// one consistent 64-bit value even while the port counts.
    fn read_counter(&mut self, port: PortIndex, entry: u32) -> Result<u64, TableWriteError> {
        let p = self.instance(port)?;
        let e = checked_counter_entry(entry)?;
        let low = self.bus.read32(counter::VALUE_LOW.address(p, e));
        let high = self.bus.read32(counter::VALUE_HIGH.address(p, e));
        Ok(u64::from(high) << 32 | u64::from(low))
    }

    fn clear_counters(&mut self, port: PortIndex) -> Result<(), TableWriteError> {
        let p = self.instance(port)?;
        let bits = counter_control::CLEAR_PORTS.encode(1 << p);
        write(&mut self.bus, counter_control::CLEAR, 0, 0, bits);
        Ok(())
    }

    fn set_completion_timeout_us(&mut self, microseconds: u32) -> Result<(), TableWriteError> {
        let value = global::TIMEOUT_MICROSECONDS.encode(checked_completion_timeout(microseconds)?);
        write(&mut self.bus, global::COMPLETION_TIMEOUT, 0, 0, value);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bus whose identity registers read `identity`, by register, and everything else 0.
    struct Identity(&'static [(Register, u32)]);

    impl CsrBus for Identity {
        fn read32(&mut self, address: u32) -> u32 {
            self.0
                .iter()
                .find(|(register, _)| register.address(0, 0) == address)
                .map_or(0, |(_, value)| *value)
        }

        fn write32(&mut self, address: u32, _value: u32) {
            panic!("no write before the identity is checked, got one to {address:#x}");
        }
    }

    const VERSION: u32 = global::VERSION_MAJOR << 16 | global::VERSION_MINOR;

    #[test]
    fn a_bus_without_a_weft_data_plane_is_refused() {
        assert_eq!(
            CsrDataPlane::new(Identity(&[])).err(),
            Some(IdentityError::NotWeft { id: 0 })
        );
    }

    #[test]
    fn an_older_register_map_is_refused() {
        let identity = &[(global::ID, global::ID_VALUE), (global::VERSION, 1 << 16)];
        assert_eq!(
            CsrDataPlane::new(Identity(identity)).err(),
            Some(IdentityError::Version { major: 1, minor: 0 })
        );
    }

    #[test]
    fn a_table_of_another_size_is_refused() {
        let identity = &[
            (global::ID, global::ID_VALUE),
            (global::VERSION, VERSION),
            (global::PORTS, 8),
            // 8 windows per port instead of 16.
            (global::PORT_TABLES, 32 << 16 | 8),
        ];
        assert_eq!(
            CsrDataPlane::new(Identity(identity)).err(),
            Some(IdentityError::Capacity {
                table: "window",
                hardware: 8,
                firmware: 16
            })
        );
    }
}
