//! The builtin topics: what the application learns about the remote participants, writers and
//! readers of its domain (DDS 1.4 2.2.5, DCPSParticipant, DCPSPublication, DCPSSubscription).
//!
//! Two ways in, both on [`DomainParticipant`](crate::DomainParticipant):
//!
//! - **builtin readers**, `builtin_participants_reader()`, `builtin_publications_reader()`,
//!   `builtin_subscriptions_reader()` (DDS: `get_builtin_subscriber()->lookup_datareader`):
//!   ordinary [`DataReader`](crate::DataReader)s of [`ParticipantBuiltinTopicData`],
//!   [`PublicationBuiltinTopicData`] and [`SubscriptionBuiltinTopicData`], with `read`/`take`,
//!   [`SampleInfo`](crate::SampleInfo), ReadConditions, the StatusCondition
//!   (DATA_AVAILABLE), listeners and the async [`stream`](crate::DataReader::stream). A
//!   remote entity discovered is a sample of a new instance (view state NEW); a changed
//!   announcement (QoS, user data, locators) a new sample of it; its removal (deletion
//!   announced, lease expired, endpoint withdrawn, participant lost) makes the instance
//!   NOT_ALIVE_DISPOSED. The readers exist from the participant's creation, so what was
//!   discovered before the first call is there, unread.
//! - **snapshots**: `discovered_participants()`, `discovered_publications()`,
//!   `discovered_subscriptions()` and the `get_discovered_*_data(handle)` look-ups, which
//!   copy what discovery knows now and touch no reader state.
//!
//! Only *remote* entities appear, as in RTI Connext (Cyclone DDS also lists the local
//! ones): the application knows its own. The instance handle of an entity is its GUID's key
//! hash ([`BuiltinTopicKey::instance_handle`]), so the `publication_handle` of a user
//! sample, or a status's `last_publication_handle`, leads straight to its announcement.
//!
//! ```no_run
//! # use tachyon::prelude::*;
//! # fn main() -> Result<(), Error> {
//! let participant = DomainParticipant::new(0)?;
//! let readers = participant.builtin_publications_reader();
//! while readers.wait_for_data(Duration::from_secs(1)) {
//!     for s in readers.take(usize::MAX)? {
//!         match (&s.data, s.info.instance_state) {
//!             (Some(p), InstanceState::Alive) => println!("{} writes {} ({})", p.key, p.topic_name, p.type_name),
//!             _ => println!("{} is gone", tachyon::builtin::BuiltinTopicKey::from_instance_handle(s.info.instance_handle)),
//!         }
//!     }
//! }
//! # Ok(()) }
//! ```

use std::fmt;

use tachyon_cdr::KeyHash;
pub use tachyon_proto::discovery::ProductVersion;
use tachyon_proto::discovery::{ParticipantData, PublicationData, SubscriptionData};
use tachyon_proto::qos::{DataReaderQos, DataWriterQos, Presentation};
use tachyon_proto::Duration;
use tachyon_wire::{EntityId, Guid, Locator, VendorId};

use crate::runtime::builtin::{guid_key, key_guid};
use crate::subscription::{sealed, Readable};

/// The name of the participants' builtin topic.
pub const DCPS_PARTICIPANT: &str = "DCPSParticipant";
/// The name of the writers' builtin topic.
pub const DCPS_PUBLICATION: &str = "DCPSPublication";
/// The name of the readers' builtin topic.
pub const DCPS_SUBSCRIPTION: &str = "DCPSSubscription";

/// The key of a builtin-topic instance: the remote entity's GUID (DDS `BuiltinTopicKey_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BuiltinTopicKey(pub Guid);

impl BuiltinTopicKey {
    /// The entity's GUID.
    pub fn guid(&self) -> Guid {
        self.0
    }

    /// The instance handle of the entity on its builtin reader (its GUID's key hash), as in
    /// `SampleInfo::instance_handle`; also its `publication_handle` on user readers.
    pub fn instance_handle(&self) -> KeyHash {
        guid_key(&self.0)
    }

    /// The key an instance handle of a builtin reader stands for.
    pub fn from_instance_handle(handle: KeyHash) -> BuiltinTopicKey {
        BuiltinTopicKey(key_guid(&handle))
    }
}

impl From<Guid> for BuiltinTopicKey {
    fn from(guid: Guid) -> BuiltinTopicKey {
        BuiltinTopicKey(guid)
    }
}

impl fmt::Display for BuiltinTopicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Guid { prefix, entity_id } = self.0;
        write!(f, "{prefix}")?;
        for b in entity_id.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// A remote participant (DCPSParticipant): its key and QoS as DDS defines them, and what
/// its SPDP announcement adds (vendor, lease, locators, properties).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParticipantBuiltinTopicData {
    /// The participant's GUID (prefix and entity id `0x000001c1`).
    pub key: BuiltinTopicKey,
    /// USER_DATA of the participant's QoS.
    pub user_data: Vec<u8>,
    /// ENTITY_NAME, if announced.
    pub entity_name: Option<String>,
    /// The DDS implementation (Tachyon, Cyclone DDS, Fast DDS, RTI …).
    pub vendor_id: VendorId,
    /// The domain id it announced (`None`: not announced, the receiver's is assumed).
    pub domain_id: Option<u32>,
    /// DOMAIN_TAG (empty by default).
    pub domain_tag: String,
    /// How long it is kept without hearing from it (`None`: forever).
    pub lease_duration: Option<Duration>,
    /// PROPERTY_LIST name/value pairs it announced.
    pub properties: Vec<(String, String)>,
    /// Where its discovery traffic is received (unicast).
    pub metatraffic_unicast_locators: Vec<Locator>,
    /// Where its discovery traffic is received (multicast).
    pub metatraffic_multicast_locators: Vec<Locator>,
    /// Where user data for its endpoints goes by default (unicast).
    pub default_unicast_locators: Vec<Locator>,
    /// Where user data for its endpoints goes by default (multicast).
    pub default_multicast_locators: Vec<Locator>,
    /// The release of the implementation, when its vendor announces it (Cyclone DDS, Fast
    /// DDS and RTI Connext do, each in a parameter of its own).
    pub product_version: Option<ProductVersion>,
}

impl From<&ParticipantData> for ParticipantBuiltinTopicData {
    fn from(d: &ParticipantData) -> ParticipantBuiltinTopicData {
        ParticipantBuiltinTopicData {
            key: BuiltinTopicKey(Guid::new(d.guid_prefix, EntityId::PARTICIPANT)),
            user_data: d.user_data.clone(),
            entity_name: d.entity_name.clone(),
            vendor_id: d.vendor_id,
            domain_id: d.domain_id,
            domain_tag: d.domain_tag.clone(),
            lease_duration: d.lease_duration,
            properties: d.properties.clone(),
            metatraffic_unicast_locators: d.metatraffic_unicast.clone(),
            metatraffic_multicast_locators: d.metatraffic_multicast.clone(),
            default_unicast_locators: d.default_unicast.clone(),
            default_multicast_locators: d.default_multicast.clone(),
            product_version: d.product_version,
        }
    }
}

/// A remote writer (DCPSPublication): key, owner, topic, type and every QoS policy it
/// announced.
#[derive(Clone, Debug, PartialEq)]
pub struct PublicationBuiltinTopicData {
    /// The writer's GUID.
    pub key: BuiltinTopicKey,
    /// Its participant's GUID.
    pub participant_key: BuiltinTopicKey,
    /// The topic it writes.
    pub topic_name: String,
    /// The type name it announced.
    pub type_name: String,
    /// Its QoS (durability, deadline, liveliness, reliability, ownership, lifespan,
    /// user data, representation …; what is not announced has the DDS default).
    pub qos: DataWriterQos,
    /// PRESENTATION of its publisher.
    pub presentation: Presentation,
    /// PARTITION of its publisher.
    pub partition: Vec<String>,
    /// TOPIC_DATA of its topic.
    pub topic_data: Vec<u8>,
    /// GROUP_DATA of its publisher.
    pub group_data: Vec<u8>,
    /// ENTITY_NAME, if announced.
    pub entity_name: Option<String>,
    /// The XTypes TypeInformation it announced, serialized, if any.
    pub type_information: Option<Vec<u8>>,
    /// Where it receives acknowledgements (unicast; its participant's defaults if it
    /// announced none).
    pub unicast_locators: Vec<Locator>,
    /// Multicast locators it announced.
    pub multicast_locators: Vec<Locator>,
}

impl From<&PublicationData> for PublicationBuiltinTopicData {
    fn from(d: &PublicationData) -> PublicationBuiltinTopicData {
        PublicationBuiltinTopicData {
            key: BuiltinTopicKey(d.guid),
            participant_key: BuiltinTopicKey(owner(d.guid, d.participant_guid)),
            topic_name: d.topic_name.clone(),
            type_name: d.type_name.clone(),
            qos: (*d.qos).clone(),
            presentation: d.presentation,
            partition: d.partition.clone(),
            topic_data: d.topic_data.clone(),
            group_data: d.group_data.clone(),
            entity_name: d.entity_name.clone(),
            type_information: d.type_information.clone(),
            unicast_locators: d.unicast_locators.clone(),
            multicast_locators: d.multicast_locators.clone(),
        }
    }
}

/// A remote reader (DCPSSubscription): key, owner, topic, type and every QoS policy it
/// announced.
#[derive(Clone, Debug, PartialEq)]
pub struct SubscriptionBuiltinTopicData {
    /// The reader's GUID.
    pub key: BuiltinTopicKey,
    /// Its participant's GUID.
    pub participant_key: BuiltinTopicKey,
    /// The topic it reads.
    pub topic_name: String,
    /// The type name it announced.
    pub type_name: String,
    /// Its QoS (durability, deadline, liveliness, reliability, ownership, time-based
    /// filter, user data, representation …; what is not announced has the DDS default).
    pub qos: DataReaderQos,
    /// PRESENTATION of its subscriber.
    pub presentation: Presentation,
    /// PARTITION of its subscriber.
    pub partition: Vec<String>,
    /// TOPIC_DATA of its topic.
    pub topic_data: Vec<u8>,
    /// GROUP_DATA of its subscriber.
    pub group_data: Vec<u8>,
    /// ENTITY_NAME, if announced.
    pub entity_name: Option<String>,
    /// The XTypes TypeInformation it announced, serialized, if any.
    pub type_information: Option<Vec<u8>>,
    /// Whether it expects inline QoS with every sample.
    pub expects_inline_qos: bool,
    /// Where it receives data (unicast; its participant's defaults if it announced none).
    pub unicast_locators: Vec<Locator>,
    /// Multicast locators it receives data on.
    pub multicast_locators: Vec<Locator>,
}

impl From<&SubscriptionData> for SubscriptionBuiltinTopicData {
    fn from(d: &SubscriptionData) -> SubscriptionBuiltinTopicData {
        SubscriptionBuiltinTopicData {
            key: BuiltinTopicKey(d.guid),
            participant_key: BuiltinTopicKey(owner(d.guid, d.participant_guid)),
            topic_name: d.topic_name.clone(),
            type_name: d.type_name.clone(),
            qos: (*d.qos).clone(),
            presentation: d.presentation,
            partition: d.partition.clone(),
            topic_data: d.topic_data.clone(),
            group_data: d.group_data.clone(),
            entity_name: d.entity_name.clone(),
            type_information: d.type_information.clone(),
            expects_inline_qos: d.expects_inline_qos,
            unicast_locators: d.unicast_locators.clone(),
            multicast_locators: d.multicast_locators.clone(),
        }
    }
}

/// An endpoint's participant: as announced, else the one its GUID prefix names.
fn owner(endpoint: Guid, announced: Option<Guid>) -> Guid {
    announced.unwrap_or(Guid::new(endpoint.prefix, EntityId::PARTICIPANT))
}

// The builtin caches hold the announcement as discovery encodes it (a PL_CDR parameter
// list); a builtin reader decodes it like any reader decodes its samples.

impl sealed::Sealed for ParticipantBuiltinTopicData {}
impl Readable for ParticipantBuiltinTopicData {
    fn decode_payload(payload: &[u8]) -> Result<Self, String> {
        ParticipantData::from_payload(payload)
            .map(|d| ParticipantBuiltinTopicData::from(&d))
            .map_err(|e| e.to_string())
    }
}

impl sealed::Sealed for PublicationBuiltinTopicData {}
impl Readable for PublicationBuiltinTopicData {
    fn decode_payload(payload: &[u8]) -> Result<Self, String> {
        PublicationData::from_payload(payload)
            .map(|d| PublicationBuiltinTopicData::from(&d))
            .map_err(|e| e.to_string())
    }
}

impl sealed::Sealed for SubscriptionBuiltinTopicData {}
impl Readable for SubscriptionBuiltinTopicData {
    fn decode_payload(payload: &[u8]) -> Result<Self, String> {
        SubscriptionData::from_payload(payload)
            .map(|d| SubscriptionBuiltinTopicData::from(&d))
            .map_err(|e| e.to_string())
    }
}
