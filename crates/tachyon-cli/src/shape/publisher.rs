//! The publishing side of shape_main: one writer per topic, each writing `--num-instances`
//! instances every `--write-period`, moving the shape around a 240 × 270 area.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tachyon::qos::{DataWriterQos, PublisherQos};
use tachyon::{DataWriter, DomainParticipant, Publisher, StatusMask, Topic};

use super::coherent;
use super::listeners::Printer;
use super::types::ShapeType;
use super::{
    endpoint_qos, instance_color, presentation, sleep_unless_stopped, FinalState, ShapeOptions,
};

const DA_WIDTH: i32 = 240;
const DA_HEIGHT: i32 = 270;

pub struct ShapePublisher {
    publisher: Publisher,
    writers: Vec<(String, DataWriter<ShapeType>)>,
}

impl ShapePublisher {
    pub fn new(
        participant: &DomainParticipant,
        topics: &[Topic<ShapeType>],
        o: &ShapeOptions,
    ) -> Result<ShapePublisher, String> {
        let mut pub_qos = PublisherQos::default().presentation(presentation(o));
        if let Some(p) = &o.partition {
            pub_qos = pub_qos.partition(&[p.as_str()]);
        }
        let publisher = participant
            .create_publisher_with_qos(pub_qos)
            .map_err(|e| format!("failed to create publisher: {e}"))?;
        let mut qos = endpoint_qos!(o, DataWriterQos::default());
        if o.ownership_strength != -1 {
            qos = qos.ownership_strength(o.ownership_strength);
        }
        if !o.lifespan.is_zero() {
            qos = qos.lifespan(o.lifespan);
        }
        if o.final_state == FinalState::Unregister {
            qos = qos.autodispose_unregistered_instances(false);
        }
        let color = o.color.as_deref().unwrap_or("BLUE");
        let mut writers = Vec::new();
        for topic in topics {
            println!("Create writer for topic: {} color: {color}", topic.name());
            let printer = Arc::new(Printer {
                topic: topic.name().to_owned(),
            });
            let w = publisher
                .create_datawriter_with_listener(topic, qos.clone(), printer, StatusMask::ALL)
                .map_err(|e| format!("failed to create datawriter topic: {}: {e}", topic.name()))?;
            writers.push((topic.name().to_owned(), w));
        }
        Ok(ShapePublisher { publisher, writers })
    }

    pub fn run(&self, o: &ShapeOptions, stop: &AtomicBool) -> Result<(), String> {
        let mut rng = Rng::seeded();
        let base = o.color.clone().unwrap_or_else(|| "BLUE".to_owned());
        let mut shape = ShapeType {
            color: base.clone(),
            x: rng.below(DA_WIDTH),
            y: rng.below(DA_HEIGHT),
            shapesize: o.shapesize,
            additional_payload_size: vec![255; o.additional_payload_size as usize],
        };
        let mut xvel = (rng.below(5) + 1) * if rng.below(2) == 1 { -1 } else { 1 };
        let mut yvel = (rng.below(5) + 1) * if rng.below(2) == 1 { -1 } else { 1 };
        let sets = (o.coherent || o.ordered) && o.coherent_sample_count != 0;
        let mut n: u32 = 0;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            move_shape(&mut shape, &mut xvel, &mut yvel);
            if o.shapesize == 0 {
                shape.shapesize = if o.size_modulo > 0 {
                    (shape.shapesize % o.size_modulo) + 1
                } else {
                    shape.shapesize.wrapping_add(1)
                };
            }
            if sets && n % o.coherent_sample_count == 0 {
                println!("Started Coherent Set");
                coherent::begin(&self.publisher)?;
            }
            for (name, w) in &self.writers {
                for j in 0..o.num_instances {
                    if o.num_instances > 1 {
                        shape.color = instance_color(&base, j);
                    }
                    if let Err(e) = w.write(&shape) {
                        // shape_main ignores the return code of write(); say why it failed.
                        println!("write failed: {e}");
                    }
                    if o.print_writer_samples {
                        println!("{}", shape.line(name));
                    }
                }
            }
            if sets && n % o.coherent_sample_count == o.coherent_sample_count - 1 {
                println!("Finished Coherent Set");
                coherent::end(&self.publisher)?;
            }
            sleep_unless_stopped(o.write_period, stop);
            n = n.wrapping_add(1);
            if o.num_iterations != 0 && o.num_iterations <= n {
                break;
            }
        }
        if o.final_state != FinalState::Unspecified {
            for (_, w) in &self.writers {
                for j in 0..o.num_instances {
                    if o.num_instances > 1 {
                        shape.color = instance_color(&base, j);
                    }
                    let r = match o.final_state {
                        FinalState::Unregister => w.unregister_instance(&shape),
                        _ => w.dispose(&shape),
                    };
                    if let Err(e) = r {
                        println!("final instance state failed: {e}");
                    }
                }
            }
        }
        // Let the readers acknowledge everything before the writers go away.
        for (_, w) in &self.writers {
            let _ = w.wait_for_acknowledgments(Duration::from_secs(1));
        }
        Ok(())
    }
}

/// shape_main's `moveShape`: bounce off the borders of the drawing area.
fn move_shape(s: &mut ShapeType, xvel: &mut i32, yvel: &mut i32) {
    s.x += *xvel;
    s.y += *yvel;
    if s.x < 0 {
        s.x = 0;
        *xvel = -*xvel;
    }
    if s.x > DA_WIDTH {
        s.x = DA_WIDTH;
        *xvel = -*xvel;
    }
    if s.y < 0 {
        s.y = 0;
        *yvel = -*yvel;
    }
    if s.y > DA_HEIGHT {
        s.y = DA_HEIGHT;
        *yvel = -*yvel;
    }
}

/// A small xorshift generator for the start position and speed (shape_main's `random()`).
struct Rng(u64);

impl Rng {
    fn seeded() -> Rng {
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Rng(u64::from(t.subsec_nanos()) ^ t.as_secs() ^ (u64::from(std::process::id()) << 32) | 1)
    }

    fn below(&mut self, n: i32) -> i32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1).unsigned_abs() as u64) as i32
    }
}
