//! Which IP addresses an outgoing federation request may reach: a pure table of the IANA special-purpose ranges, so
//! that a peer's URL (or a DNS answer for it) cannot point the instance at its own host, its network or the cloud
//! metadata service.
//!
//! The rule is conservative: a whole range is refused even where the registry marks a few addresses inside it as
//! globally reachable (192.0.0.0/24, 2001::/23), and in IPv6 anything outside global unicast (2000::/3) is refused.
//! Addresses that embed an IPv4 address (IPv4-mapped, NAT64 well-known prefix, 6to4) are judged by that address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is not public. The snake_case names are stable: they appear in errors, logs and metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NonPublicRange {
    /// 0.0.0.0, `::`.
    Unspecified,
    /// 0.0.0.0/8 other than 0.0.0.0: "this network".
    ThisNetwork,
    /// 127.0.0.0/8, `::1`.
    Loopback,
    /// 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, and the local-use NAT64 prefix 64:ff9b:1::/48.
    Private,
    /// 100.64.0.0/10, carrier-grade NAT.
    SharedAddressSpace,
    /// 169.254.0.0/16 (which holds the cloud metadata address), fe80::/10.
    LinkLocal,
    /// 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24, 2001:db8::/32, 3fff::/20.
    Documentation,
    /// 198.18.0.0/15, 2001:2::/48.
    Benchmarking,
    /// 224.0.0.0/4, ff00::/8.
    Multicast,
    /// 255.255.255.255.
    Broadcast,
    /// fc00::/7.
    UniqueLocal,
    /// fec0::/10, deprecated but still routed by some stacks.
    SiteLocal,
    /// Everything else set aside: 192.0.0.0/24, 192.88.99.0/24, 240.0.0.0/4, IPv4-compatible IPv6 (::/96),
    /// 100::/64, 2001::/23, and IPv6 outside 2000::/3.
    Reserved,
}

impl NonPublicRange {
    /// The stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            NonPublicRange::Unspecified => "unspecified",
            NonPublicRange::ThisNetwork => "this_network",
            NonPublicRange::Loopback => "loopback",
            NonPublicRange::Private => "private",
            NonPublicRange::SharedAddressSpace => "shared_address_space",
            NonPublicRange::LinkLocal => "link_local",
            NonPublicRange::Documentation => "documentation",
            NonPublicRange::Benchmarking => "benchmarking",
            NonPublicRange::Multicast => "multicast",
            NonPublicRange::Broadcast => "broadcast",
            NonPublicRange::UniqueLocal => "unique_local",
            NonPublicRange::SiteLocal => "site_local",
            NonPublicRange::Reserved => "reserved",
        }
    }
}

impl std::fmt::Display for NonPublicRange {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// True when an outgoing request may connect to `ip` under the default policy.
pub fn address_is_public(ip: IpAddr) -> bool {
    non_public_range(ip).is_none()
}

/// The special-purpose range `ip` belongs to, or `None` for a public address.
pub fn non_public_range(ip: IpAddr) -> Option<NonPublicRange> {
    match ip {
        IpAddr::V4(v4) => non_public_range_v4(v4),
        IpAddr::V6(v6) => non_public_range_v6(v6),
    }
}

/// True when `address` lies in `network`/`prefix_length`.
fn in_v4(address: Ipv4Addr, network: [u8; 4], prefix_length: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - prefix_length).unwrap_or(0);
    u32::from(address) & mask == u32::from(Ipv4Addr::from(network)) & mask
}

/// True when `address` lies in `network`/`prefix_length`.
fn in_v6(address: Ipv6Addr, network: Ipv6Addr, prefix_length: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - prefix_length).unwrap_or(0);
    u128::from(address) & mask == u128::from(network) & mask
}

fn non_public_range_v4(address: Ipv4Addr) -> Option<NonPublicRange> {
    // Order matters where ranges nest: 0.0.0.0 inside 0/8, 255.255.255.255 inside 240/4.
    let table: [([u8; 4], u32, NonPublicRange); 17] = [
        ([0, 0, 0, 0], 32, NonPublicRange::Unspecified),
        ([0, 0, 0, 0], 8, NonPublicRange::ThisNetwork),
        ([10, 0, 0, 0], 8, NonPublicRange::Private),
        ([100, 64, 0, 0], 10, NonPublicRange::SharedAddressSpace),
        ([127, 0, 0, 0], 8, NonPublicRange::Loopback),
        ([169, 254, 0, 0], 16, NonPublicRange::LinkLocal),
        ([172, 16, 0, 0], 12, NonPublicRange::Private),
        ([192, 0, 0, 0], 24, NonPublicRange::Reserved),
        ([192, 0, 2, 0], 24, NonPublicRange::Documentation),
        ([192, 88, 99, 0], 24, NonPublicRange::Reserved),
        ([192, 168, 0, 0], 16, NonPublicRange::Private),
        ([198, 18, 0, 0], 15, NonPublicRange::Benchmarking),
        ([198, 51, 100, 0], 24, NonPublicRange::Documentation),
        ([203, 0, 113, 0], 24, NonPublicRange::Documentation),
        ([224, 0, 0, 0], 4, NonPublicRange::Multicast),
        ([255, 255, 255, 255], 32, NonPublicRange::Broadcast),
        ([240, 0, 0, 0], 4, NonPublicRange::Reserved),
    ];
    table
        .iter()
        .find(|(network, prefix_length, _)| in_v4(address, *network, *prefix_length))
        .map(|(_, _, range)| *range)
}

fn non_public_range_v6(address: Ipv6Addr) -> Option<NonPublicRange> {
    let segments = address.segments();
    if address.is_unspecified() {
        return Some(NonPublicRange::Unspecified);
    }
    if address.is_loopback() {
        return Some(NonPublicRange::Loopback);
    }
    // ::ffff:a.b.c.d reaches a.b.c.d over IPv4 on a dual-stack socket.
    if let Some(embedded) = address.to_ipv4_mapped() {
        return non_public_range_v4(embedded);
    }
    // 64:ff9b::/96, the NAT64 well-known prefix: a translator forwards to the embedded IPv4 address.
    if in_v6(address, Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96) {
        return non_public_range_v4(last_32_bits(address));
    }
    // 2002::/16, 6to4: the IPv4 address of the relay endpoint sits in bits 16..48.
    if segments[0] == 0x2002 {
        let embedded = Ipv4Addr::new(
            (segments[1] >> 8) as u8,
            segments[1] as u8,
            (segments[2] >> 8) as u8,
            segments[2] as u8,
        );
        return non_public_range_v4(embedded);
    }
    let table: [(Ipv6Addr, u32, NonPublicRange); 11] = [
        (Ipv6Addr::UNSPECIFIED, 96, NonPublicRange::Reserved),
        (
            Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0),
            48,
            NonPublicRange::Private,
        ),
        (Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0), 64, NonPublicRange::Reserved),
        (
            Ipv6Addr::new(0x2001, 0x2, 0, 0, 0, 0, 0, 0),
            48,
            NonPublicRange::Benchmarking,
        ),
        (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23, NonPublicRange::Reserved),
        (
            Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0),
            32,
            NonPublicRange::Documentation,
        ),
        (
            Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0),
            20,
            NonPublicRange::Documentation,
        ),
        (
            Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0),
            7,
            NonPublicRange::UniqueLocal,
        ),
        (
            Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0),
            10,
            NonPublicRange::LinkLocal,
        ),
        (
            Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0),
            10,
            NonPublicRange::SiteLocal,
        ),
        (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8, NonPublicRange::Multicast),
    ];
    if let Some((_, _, range)) = table
        .iter()
        .find(|(network, prefix_length, _)| in_v6(address, *network, *prefix_length))
    {
        return Some(*range);
    }
    // IANA allocates global unicast only from 2000::/3; the rest is unassigned or reserved.
    if !in_v6(address, Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3) {
        return Some(NonPublicRange::Reserved);
    }
    None
}

fn last_32_bits(address: Ipv6Addr) -> Ipv4Addr {
    let octets = address.octets();
    Ipv4Addr::new(octets[12], octets[13], octets[14], octets[15])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_address_is_classified_as_the_registry_says() {
        use NonPublicRange::*;
        let table: &[(&str, Option<NonPublicRange>)] = &[
            // IPv4 public.
            ("1.1.1.1", None),
            ("8.8.8.8", None),
            ("93.184.215.14", None),
            ("9.255.255.255", None),
            ("11.0.0.0", None),
            ("100.63.255.255", None),
            ("100.128.0.0", None),
            ("126.255.255.255", None),
            ("128.0.0.0", None),
            ("169.253.255.255", None),
            ("169.255.0.0", None),
            ("172.15.255.255", None),
            ("172.32.0.0", None),
            ("192.0.1.0", None),
            ("192.0.3.0", None),
            ("192.88.98.255", None),
            ("192.167.255.255", None),
            ("192.169.0.0", None),
            ("198.17.255.255", None),
            ("198.20.0.0", None),
            ("223.255.255.255", None),
            // IPv4 special purpose.
            ("0.0.0.0", Some(Unspecified)),
            ("0.1.2.3", Some(ThisNetwork)),
            ("0.255.255.255", Some(ThisNetwork)),
            ("10.0.0.0", Some(Private)),
            ("10.255.255.255", Some(Private)),
            ("100.64.0.0", Some(SharedAddressSpace)),
            ("100.127.255.255", Some(SharedAddressSpace)),
            ("127.0.0.1", Some(Loopback)),
            ("127.255.255.254", Some(Loopback)),
            ("169.254.0.1", Some(LinkLocal)),
            ("169.254.169.254", Some(LinkLocal)),
            ("172.16.0.0", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("192.0.0.1", Some(Reserved)),
            ("192.0.0.9", Some(Reserved)),
            ("192.0.2.1", Some(Documentation)),
            ("192.88.99.1", Some(Reserved)),
            ("192.168.0.1", Some(Private)),
            ("192.168.255.255", Some(Private)),
            ("198.18.0.1", Some(Benchmarking)),
            ("198.19.255.255", Some(Benchmarking)),
            ("198.51.100.7", Some(Documentation)),
            ("203.0.113.200", Some(Documentation)),
            ("224.0.0.1", Some(Multicast)),
            ("239.255.255.250", Some(Multicast)),
            ("240.0.0.1", Some(Reserved)),
            ("254.255.255.255", Some(Reserved)),
            ("255.255.255.255", Some(Broadcast)),
            // IPv6 public.
            ("2606:4700:4700::1111", None),
            ("2001:4860:4860::8888", None),
            ("2a00:1450:4001:80b::200e", None),
            ("2001:200::1", None),
            ("3ffe::1", None),
            ("3fff:1000::1", None),
            // IPv6 special purpose.
            ("::", Some(Unspecified)),
            ("::1", Some(Loopback)),
            ("::2", Some(Reserved)),
            ("::7f00:1", Some(Reserved)),
            ("::8.8.8.8", Some(Reserved)),
            ("64:ff9b:1::1", Some(Private)),
            ("100::1", Some(Reserved)),
            ("2001::1", Some(Reserved)),
            ("2001:1ff:ffff::1", Some(Reserved)),
            ("2001:2::1", Some(Benchmarking)),
            ("2001:db8::1", Some(Documentation)),
            ("3fff::1", Some(Documentation)),
            ("fc00::1", Some(UniqueLocal)),
            ("fd12:3456:789a::1", Some(UniqueLocal)),
            ("fe80::1", Some(LinkLocal)),
            ("febf:ffff::1", Some(LinkLocal)),
            ("fec0::1", Some(SiteLocal)),
            ("ff02::1", Some(Multicast)),
            ("ff0e::1", Some(Multicast)),
            ("1000::1", Some(Reserved)),
            ("4000::1", Some(Reserved)),
            ("5f00::1", Some(Reserved)),
            // IPv4 inside IPv6: judged by the embedded address.
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:10.1.2.3", Some(Private)),
            ("::ffff:169.254.169.254", Some(LinkLocal)),
            ("::ffff:100.64.0.1", Some(SharedAddressSpace)),
            ("::ffff:0.0.0.0", Some(Unspecified)),
            ("::ffff:255.255.255.255", Some(Broadcast)),
            ("::ffff:8.8.8.8", None),
            ("64:ff9b::127.0.0.1", Some(Loopback)),
            ("64:ff9b::192.168.1.1", Some(Private)),
            ("64:ff9b::8.8.8.8", None),
            ("2002:7f00:1::1", Some(Loopback)),
            ("2002:a00:1::1", Some(Private)),
            ("2002:808:808::1", None),
        ];
        let mut wrong = Vec::new();
        for (text, expected) in table {
            let address: IpAddr = text.parse().expect("the table holds valid addresses");
            let found = non_public_range(address);
            if found != *expected || address_is_public(address) != expected.is_none() {
                wrong.push(format!("{text}: expected {expected:?}, found {found:?}"));
            }
        }
        assert!(wrong.is_empty(), "misclassified: {wrong:#?}");
    }

    #[test]
    fn every_address_the_standard_library_calls_loopback_private_or_link_local_is_refused() {
        // A sweep over the first octet and a few second octets, checked against std's own predicates.
        for first in 0..=255u8 {
            for second in [0u8, 1, 16, 31, 64, 127, 168, 254, 255] {
                let address = Ipv4Addr::new(first, second, 0, 1);
                let std_says_special = address.is_loopback()
                    || address.is_private()
                    || address.is_link_local()
                    || address.is_multicast()
                    || address.is_documentation()
                    || address.is_unspecified();
                if std_says_special {
                    assert!(!address_is_public(IpAddr::V4(address)), "{address}");
                    let mapped = address.to_ipv6_mapped();
                    assert!(!address_is_public(IpAddr::V6(mapped)), "{mapped}");
                }
            }
        }
    }
}
