//! Dynamic readers and writers between two participants: a program that never saw a
//! topic's type asks for it (TypeLookup), reads its samples as DynamicData, and writes,
//! disposes and unregisters instances that a reader of the derived type sees exactly as if
//! the derived type had written them (same instances, same states).

mod common;

use common::*;
use tachyon::prelude::*;
use tachyon::xtypes::dynamic::Value;
use tachyon::InstanceState;

/// The suite's shape type: keyed, appendable.
#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "ShapeType", appendable)]
struct ShapeType {
    #[dds(key, bound = 128)]
    color: String,
    x: i32,
    y: i32,
    shapesize: i32,
}

fn shape(color: &str, x: i32) -> ShapeType {
    ShapeType {
        color: color.into(),
        x,
        y: 2 * x,
        shapesize: 30,
    }
}

fn dynamic_reader(p: &DomainParticipant, ty: &DynamicType, name: &str) -> DataReader<DynamicData> {
    let t = p.create_dynamic_topic(name, ty).expect("dynamic topic");
    p.create_subscriber()
        .expect("subscriber")
        .create_datareader(&t, DataReaderQos::default().reliable().keep_all())
        .expect("dynamic reader")
}

#[test]
fn a_dynamic_reader_reads_a_type_it_never_saw() {
    let (a, b) = participants(71);
    let t = a.create_topic::<ShapeType>("Square").expect("topic");
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&t, DataWriterQos::default().reliable().keep_all())
        .expect("writer");
    // b knows nothing of ShapeType: it asks a's participant for it.
    let ty = b
        .find_topic_type("Square", PATIENCE)
        .expect("the type from TypeLookup");
    assert_eq!(ty.name(), "ShapeType");
    assert!(ty.is_keyed());
    assert!(
        ty.to_idl().contains("@key string<128> color;"),
        "{}",
        ty.to_idl()
    );
    let r = dynamic_reader(&b, &ty, "Square");
    wait_matched(&w, &r);
    w.write(&shape("BLUE", 1)).expect("write");
    w.write(&shape("RED", 2)).expect("write");
    w.dispose(&shape("BLUE", 0)).expect("dispose");
    // Read (not taken) until the dispose is seen: a dispose that finds a sample of the
    // instance unread marks it instead of adding a sample without data.
    let blue_handle = tachyon_cdr::key_hash(&shape("BLUE", 1)).expect("hash");
    let mut got = Vec::new();
    wait_until("two samples and a dispose", || {
        got = r.read(16).expect("read");
        got.iter().any(|s| {
            s.info.instance_handle == blue_handle
                && s.info.instance_state == InstanceState::NotAliveDisposed
        }) && got.iter().filter(|s| s.data.is_some()).count() == 2
    });
    let blue = got
        .iter()
        .find_map(|s| {
            s.data
                .as_ref()
                .filter(|d| d.get("color") == Some(&Value::String("BLUE".into())))
        })
        .expect("BLUE");
    assert_eq!(
        blue.to_json(),
        r#"{"color": "BLUE", "x": 1, "y": 2, "shapesize": 30}"#
    );
    assert_eq!(blue.get("x"), Some(&Value::Int32(1)));
    // Instances are the derived type's: the same key hash.
    assert_eq!(blue.key_hash().expect("hash"), blue_handle);
    let red = tachyon_cdr::key_hash(&shape("RED", 2)).expect("hash");
    assert!(got
        .iter()
        .any(|s| s.info.instance_handle == red && s.info.instance_state == InstanceState::Alive));
    assert_eq!(r.decode_errors(), 0);
}

#[test]
fn a_dynamic_writer_writes_and_disposes_for_a_derived_reader() {
    let (a, b) = participants(72);
    let ty = DynamicType::of::<ShapeType>().expect("described");
    let t = a.create_dynamic_topic("Circle", &ty).expect("topic");
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&t, DataWriterQos::default().reliable().keep_all())
        .expect("dynamic writer");
    let tb = b.create_topic::<ShapeType>("Circle").expect("topic");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&tb, DataReaderQos::default().reliable().keep_all())
        .expect("reader");
    wait_matched(&w, &r);
    let mut s = DynamicData::new(&ty);
    s.set("color", Value::String("GREEN".into()))
        .expect("color");
    s.set("x", Value::Int32(5)).expect("x");
    s.set("y", Value::Int32(6)).expect("y");
    s.set("shapesize", Value::Int32(7)).expect("size");
    // A member that does not exist, or a value of the wrong type: refused, nothing changed.
    assert!(matches!(
        s.set("z", Value::Int32(1)),
        Err(Error::BadParameter(_))
    ));
    assert!(matches!(
        s.set("x", Value::String("no".into())),
        Err(Error::BadParameter(_))
    ));
    w.write(&s).expect("write");
    w.unregister_instance(&s).expect("unregister");
    let handle = tachyon_cdr::key_hash(&shape("GREEN", 0)).expect("hash");
    let mut got = Vec::new();
    wait_until("the sample and the unregister", || {
        got = r.read(16).expect("read");
        // autodispose_unregistered_instances (the default): the instance is disposed.
        got.iter()
            .any(|s| s.info.instance_state == InstanceState::NotAliveDisposed)
    });
    assert_eq!(
        got[0].data,
        Some(ShapeType {
            color: "GREEN".into(),
            x: 5,
            y: 6,
            shapesize: 7
        })
    );
    assert!(got.iter().all(|s| s.info.instance_handle == handle));
    assert_eq!(w.lookup_instance(&s).expect("handle"), handle);
}

#[test]
fn a_sample_of_another_type_is_refused() {
    let (a, _b) = participants(73);
    let ty = DynamicType::of::<ShapeType>().expect("described");
    let t = a.create_dynamic_topic("Triangle", &ty).expect("topic");
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&t, DataWriterQos::default())
        .expect("writer");
    #[derive(DdsType)]
    #[dds(name = "Other")]
    struct Other {
        v: i32,
    }
    let other = DynamicType::of::<Other>().expect("described");
    assert!(matches!(
        w.write(&DynamicData::new(&other)),
        Err(Error::BadParameter(_))
    ));
    // A value that does not fit the type is an encoding error, not a panic.
    let wrong = DynamicData::from_value(&ty, Value::Int32(1));
    assert!(wrong.is_err());
    // No endpoint of the topic: the type cannot be found.
    assert!(matches!(
        a.find_topic_type("Nobody", Duration::from_millis(100)),
        Err(Error::Timeout)
    ));
    // Not a struct or union: no topic type.
    assert!(DynamicType::new(tachyon_cdr::TypeDesc::Primitive(
        tachyon_cdr::Primitive::Int32
    ))
    .is_err());
}

#[test]
fn instances_of_payloads_without_key_hash_are_derived_from_the_description() {
    // What a dynamic reader does with a DATA that carries no key hash (Cyclone DDS 11 sends
    // none): the handle comes from the payload, a sample or a key-only one in either form.
    use tachyon::Readable;
    use tachyon_cdr::{Endianness, KeyForm, XcdrVersion};
    let ty = DynamicType::of::<ShapeType>().expect("described");
    let f = <DynamicData as Readable>::key_hash_fn(Some(&ty)).expect("keyed");
    let s = shape("MAGENTA", 3);
    let want = tachyon_cdr::key_hash(&s).expect("hash");
    for version in [XcdrVersion::Xcdr1, XcdrVersion::Xcdr2] {
        let mut buf = vec![0u8; 256];
        let n = tachyon_cdr::serialize(&s, version, Endianness::Little, &mut buf).expect("ser");
        assert_eq!(f.call(&buf[..n], false), Some(want), "{version:?}");
        for form in [KeyForm::Framed, KeyForm::Bare] {
            let n =
                tachyon_cdr::serialize_key_payload(&s, version, Endianness::Big, form, &mut buf)
                    .expect("key");
            assert_eq!(f.call(&buf[..n], true), Some(want), "{version:?} {form:?}");
        }
    }
    assert_eq!(f.call(&[0, 7, 0, 0, 1], false), None);
    let unkeyed = DynamicType::new(tachyon_cdr::TypeDesc::Struct(std::sync::Arc::new(
        tachyon_cdr::StructDesc {
            name: "U".into(),
            extensibility: tachyon_cdr::Extensibility::Final,
            autoid_hash: false,
            nested: false,
            base: None,
            members: vec![tachyon_cdr::MemberDesc::new(
                "v",
                0,
                tachyon_cdr::TypeDesc::Primitive(tachyon_cdr::Primitive::Int32),
            )],
        },
    )))
    .expect("struct");
    assert!(<DynamicData as Readable>::key_hash_fn(Some(&unkeyed)).is_none());
}

#[test]
fn a_serialized_reader_gets_the_bytes_written() {
    let (a, b) = participants(74);
    let t = a.create_topic::<ShapeType>("Pentagon").expect("topic");
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&t, DataWriterQos::default().reliable().keep_all())
        .expect("writer");
    let tb = b
        .create_serialized_topic("Pentagon", "ShapeType", true)
        .expect("serialized topic");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&tb, DataReaderQos::default().reliable().keep_all())
        .expect("reader");
    wait_matched(&w, &r);
    let s = shape("ORANGE", 4);
    w.write(&s).expect("write");
    let got = take_all_written(&w, &r, 1);
    let mut want = vec![0u8; 256];
    let n = tachyon_cdr::serialize(
        &s,
        tachyon_cdr::XcdrVersion::Xcdr2,
        tachyon_cdr::Endianness::Little,
        &mut want,
    )
    .expect("serialize");
    assert_eq!(got[0].bytes, want[..n]);
}

#[test]
fn raw_samples_relay_a_type_unseen_with_its_instances() {
    // What tachyon-bridge does: a raw reader takes a typed writer's samples undecoded, with
    // their instances; a raw writer writes them again; a typed reader sees the same samples
    // and the same instance states.
    use tachyon::dynamic::RawSample;
    let (a, b) = participants(72);
    let typed = a.create_topic::<ShapeType>("RawIn").expect("topic");
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&typed, DataWriterQos::default().reliable().keep_all())
        .expect("writer");
    let raw_in = b
        .create_raw_topic("RawIn", "ShapeType", true)
        .expect("raw topic");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&raw_in, DataReaderQos::default().reliable().keep_all())
        .expect("raw reader");
    wait_matched(&w, &r);
    // One at a time: a dispose of an instance whose sample is still in the cache only
    // changes that sample's instance state.
    w.write(&shape("RED", 1)).expect("write");
    let mut got = Vec::new();
    wait_until("the data", || {
        got.extend(r.take(10).expect("take"));
        !got.is_empty()
    });
    w.dispose(&shape("RED", 1)).expect("dispose");
    let mut disposed = Vec::new();
    wait_until("the dispose", || {
        disposed.extend(r.take(10).expect("take"));
        !disposed.is_empty()
    });
    let red = tachyon::cdr::key_hash(&shape("RED", 0)).expect("key hash");
    assert_eq!(got[0].info.instance_handle, red);
    assert_eq!(disposed[0].info.instance_handle, red);
    assert_eq!(
        disposed[0].info.instance_state,
        InstanceState::NotAliveDisposed
    );
    let data = got[0].data.clone().expect("valid data");
    assert_eq!(
        tachyon::cdr::deserialize::<ShapeType>(&data.bytes).expect("the writer's bytes"),
        shape("RED", 1)
    );

    // Written again as they are, with their instance.
    let raw_out = b
        .create_raw_topic("RawOut", "ShapeType", true)
        .expect("raw topic");
    let rw = b
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &raw_out,
            DataWriterQos::default()
                .reliable()
                .keep_all()
                .representation(&w.qos().representation),
        )
        .expect("raw writer");
    let typed_out = a.create_topic::<ShapeType>("RawOut").expect("topic");
    let tr = a
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&typed_out, DataReaderQos::default().reliable().keep_all())
        .expect("typed reader");
    wait_matched(&rw, &tr);
    let sample = RawSample {
        bytes: data.bytes,
        key_hash: red,
    };
    rw.write(&sample).expect("raw write");
    assert_eq!(take_at_least(&tr, 1), vec![shape("RED", 1)]);
    rw.dispose(&sample).expect("raw dispose");
    let mut seen = Vec::new();
    wait_until("the typed reader sees the dispose", || {
        seen.extend(tr.take(10).expect("take"));
        !seen.is_empty()
    });
    assert_eq!(seen[0].info.instance_state, InstanceState::NotAliveDisposed);
    assert_eq!(
        seen[0].info.instance_handle, red,
        "the same instance as the original writer's"
    );
}
