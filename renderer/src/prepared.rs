//! A scene ready to render: a loaded [`Scene`] paired with the acceleration
//! structure built over its geometry and its lights' pick table.
//!
//! This is the one place that builds a scene's structure. `scene` loads the
//! geometry and the `[accel]` settings its file declares, as plain data;
//! `accel` builds from primitives and their bounds and knows nothing of
//! scenes; [`PreparedScene::new`] joins the two with the choice the command
//! line or an experiment's sweep puts in place of the declared one. That
//! choice is known when the scene is loaded, so the structure is built
//! exactly once.

use crate::accel::{self, AccelChoice, AccelSettings, BuiltAccel};
use crate::scene::{Lights, Scene, host_slice};
use device::accel::AccelView;
use device::camera::Camera;
use device::features::{Feature, Features};
use device::geometry::PrimKind;
use device::scene::SceneView;

/// A scene with the acceleration structure over its geometry.
#[derive(Clone, Debug)]
pub struct PreparedScene {
    /// The loaded scene.
    pub scene: Scene,
    /// What was built: the scene's declared settings, with the overriding
    /// choice if there was one.
    pub accel_settings: AccelSettings,
    /// The structure over `scene.geometry`.
    pub accel: BuiltAccel,
    /// The emissive primitives, for next-event estimation.
    pub lights: Lights,
}

impl PreparedScene {
    /// Builds the structure `scene` declares, with `choice` (when given) in
    /// place of the declared choice; the declared build parameters stay.
    pub fn new(scene: Scene, choice: Option<AccelChoice>) -> Self {
        let declared = scene.declared_accel;
        let accel_settings = AccelSettings {
            choice: choice.unwrap_or(declared.choice),
            ..declared
        };
        let accel = accel::build(&scene.geometry.primitives(), &accel_settings);
        let lights = Lights::collect(&scene.geometry, &scene.materials);
        PreparedScene {
            scene,
            accel_settings,
            accel,
            lights,
        }
    }

    /// The features every render of this scene uses, derived from what it
    /// holds: the kind of every primitive present, the kind of every
    /// material a primitive has, and textures where such a material's
    /// colour reads one. Next-event estimation is a render's setting, which
    /// `RenderJob::features` adds.
    pub fn features(&self) -> Features {
        let g = &self.scene.geometry;
        let present = PrimKind::ALL.into_iter().zip(g.counts()).filter(|&(_, n)| n > 0);
        let mut features = Features::of(present.map(|(kind, _)| Feature::Primitive(kind)));
        let used = (g.spheres.iter().map(|p| p.material))
            .chain(g.boxes.iter().map(|p| p.material))
            .chain(g.polygons.iter().map(|p| p.material))
            .chain(g.triangles.iter().map(|p| p.material));
        for index in used {
            let m = &self.scene.materials[index as usize];
            features = features.with(Feature::Material(m.kind));
            if [m.albedo, m.emission, m.pattern]
                .iter()
                .any(|c| c.texture.index().is_some())
            {
                features = features.with(Feature::Textures);
            }
        }
        features
    }

    /// A device view of the scene's and the structure's host arrays, with
    /// the given camera, for code that holds `features`.
    pub fn view(&self, camera: Camera, features: Features) -> SceneView<'_> {
        let s = &self.scene;
        SceneView {
            primitives: s.geometry.view(),
            materials: host_slice(&s.materials),
            camera,
            background: s.background,
            accel: AccelView {
                kind: self.accel.kind,
                bvh_nodes: host_slice(&self.accel.bvh_nodes),
                kd_nodes: host_slice(&self.accel.kd_nodes),
                bvh8_nodes: host_slice(&self.accel.bvh8_nodes),
                prims: host_slice(&self.accel.prims),
                bounds: self.accel.bounds,
            },
            lights: self.lights.view(),
            textures: s.textures_view(),
            features,
        }
    }
}
