//! IEC 61850 GOOSE on the wire: frames (BER encoder), AF_PACKET sockets, pcap files for a
//! third-party dissector, the sealed encapsulation and the veth measurement (docs/link.md
//! "GOOSE on the wire").
pub mod frame;
pub mod measure;
pub mod packet;
pub mod pcap;
pub mod report;
pub mod sealed;
pub mod stop;
