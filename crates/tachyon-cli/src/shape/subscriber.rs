//! The subscribing side of shape_main: one reader per topic (on a content-filtered topic
//! with `-c COLOR` or `--cft EXPR`), read every `--read-period` instance by instance
//! (`take_next_instance`, or `take` with `--take-read`; `read…` with `-R`), printing every
//! sample and every instance that is no longer alive.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tachyon::qos::{DataReaderQos, SubscriberQos};
use tachyon::{DataReader, DomainParticipant, InstanceState, KeyHash, Sample, StatusMask};
use tachyon::{Subscriber, Topic};

use super::coherent;
use super::listeners::Printer;
use super::types::ShapeType;
use super::{endpoint_qos, presentation, sleep_unless_stopped, ShapeOptions};

pub struct ShapeSubscriber {
    subscriber: Subscriber,
    /// Each reader with the name of its topic description (`Square`, or `Square_filtered`).
    readers: Vec<(String, DataReader<ShapeType>)>,
}

impl ShapeSubscriber {
    pub fn new(
        participant: &DomainParticipant,
        topics: &[Topic<ShapeType>],
        o: &ShapeOptions,
    ) -> Result<ShapeSubscriber, String> {
        let mut sub_qos = SubscriberQos::default().presentation(presentation(o));
        if let Some(p) = &o.partition {
            sub_qos = sub_qos.partition(&[p.as_str()]);
        }
        let subscriber = participant
            .create_subscriber_with_qos(sub_qos)
            .map_err(|e| format!("failed to create subscriber: {e}"))?;
        let mut qos = endpoint_qos!(o, DataReaderQos::default());
        if !o.time_filter.is_zero() {
            qos = qos.time_based_filter(o.time_filter);
        }
        let mut readers = Vec::new();
        for topic in topics {
            let filter = match (&o.cft_expression, &o.color) {
                (Some(expr), _) => Some((expr.clone(), Vec::new())),
                (None, Some(color)) => Some(("color = %0".to_owned(), vec![format!("'{color}'")])),
                (None, None) => None,
            };
            let printer = |name: &str| {
                Arc::new(Printer {
                    topic: name.to_owned(),
                })
            };
            let (name, reader) = match filter {
                Some((expr, params)) => {
                    let name = format!("{}_filtered", topic.name());
                    let r = filtered_reader(
                        participant,
                        &subscriber,
                        topic,
                        &name,
                        &expr,
                        &params,
                        qos.clone(),
                    )
                    .map_err(|e| format!("failed to create content filtered topic: {e}"))?;
                    println!("Create reader for topic: {name}");
                    (name, r)
                }
                None => {
                    let name = topic.name().to_owned();
                    println!("Create reader for topic: {name}");
                    let r = subscriber.create_datareader_with_listener(
                        topic,
                        qos.clone(),
                        printer(&name),
                        StatusMask::ALL,
                    );
                    (name, r)
                }
            };
            let reader = reader
                .map_err(|e| format!("failed to create datareader topic: {}: {e}", topic.name()))?;
            readers.push((name, reader));
        }
        Ok(ShapeSubscriber {
            subscriber,
            readers,
        })
    }

    pub fn run(&self, o: &ShapeOptions, stop: &AtomicBool) -> Result<(), String> {
        // The color of every instance seen, to name instances that are no longer alive.
        let mut colors: HashMap<KeyHash, String> = HashMap::new();
        let grouped = o.coherent || o.ordered;
        let mut n: u32 = 0;
        while !stop.load(Ordering::Relaxed) {
            if o.coherent {
                println!("Reading coherent sets, iteration {n}");
            }
            if o.ordered {
                println!("Reading with ordered access, iteration {n}");
            }
            if grouped {
                coherent::begin_access(&self.subscriber)?;
            }
            for (name, reader) in &self.readers {
                let mut previous: Option<KeyHash> = None;
                loop {
                    let got = read_once(reader, o, previous);
                    let samples = match got {
                        Ok(s) if !s.is_empty() => s,
                        Ok(_) => break,
                        Err(e) => {
                            println!("read failed: {e}");
                            break;
                        }
                    };
                    for s in &samples {
                        print_sample(name, reader, s, &mut colors);
                    }
                    if !o.take_read_next_instance {
                        // take()/read() return everything at once; a read() would return
                        // the same samples again.
                        break;
                    }
                    previous = Some(samples[0].info.instance_handle);
                }
            }
            if grouped {
                coherent::end_access(&self.subscriber)?;
            }
            n = n.wrapping_add(1);
            if o.num_iterations != 0 && o.num_iterations <= n {
                break;
            }
            sleep_unless_stopped(o.read_period, stop);
        }
        Ok(())
    }
}

/// One read or take as the options ask.
fn read_once(
    reader: &DataReader<ShapeType>,
    o: &ShapeOptions,
    previous: Option<KeyHash>,
) -> Result<Vec<Sample<ShapeType>>, tachyon::Error> {
    match (o.use_read, o.take_read_next_instance) {
        (false, true) => reader.take_next_instance(previous, usize::MAX),
        (false, false) => reader.take(usize::MAX),
        (true, true) => reader.read_next_instance(previous, usize::MAX),
        (true, false) => reader.read(usize::MAX),
    }
}

/// Prints a sample as shape_main does, and the instance's state when it is not alive.
fn print_sample(
    topic: &str,
    reader: &DataReader<ShapeType>,
    s: &Sample<ShapeType>,
    colors: &mut HashMap<KeyHash, String>,
) {
    let handle = s.info.instance_handle;
    if let Some(d) = &s.data {
        println!("{}", d.line(topic));
        colors.insert(handle, d.color.clone());
    }
    let state = match s.info.instance_state {
        InstanceState::Alive => return,
        InstanceState::NotAliveNoWriters => "NOT_ALIVE_NO_WRITERS_INSTANCE_STATE",
        InstanceState::NotAliveDisposed => "NOT_ALIVE_DISPOSED_INSTANCE_STATE",
    };
    let color = match reader.get_key_value(handle) {
        Ok(k) => k.color,
        Err(_) => colors.get(&handle).cloned().unwrap_or_default(),
    };
    println!("{topic:<10} {color:<10} {state}");
}

/// A reader on content-filtered topic `name` of `topic`: the outer error is the filter's
/// (shape_main's "failed to create content filtered topic"), the inner one the reader's.
fn filtered_reader(
    participant: &DomainParticipant,
    subscriber: &Subscriber,
    topic: &Topic<ShapeType>,
    name: &str,
    expr: &str,
    params: &[String],
    qos: DataReaderQos,
) -> Result<Result<DataReader<ShapeType>, tachyon::Error>, String> {
    let cft = participant
        .create_contentfilteredtopic(name, topic, expr, params)
        .map_err(|e| e.to_string())?;
    let printer = Arc::new(Printer {
        topic: name.to_owned(),
    });
    Ok(subscriber.create_datareader_with_listener(&cft, qos, printer, StatusMask::ALL))
}
