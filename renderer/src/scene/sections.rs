//! The scene file's single tables (`[render]`, `[camera]`, `[background]`,
//! each `[materials.*]`, `[accel]`), validated into their host and device
//! types.

use super::fields::{self, FieldResult, field_error, finite, point, positive, rgb, vec3};
use super::schema::{AccelDef, BackgroundDef, CameraDef, ColourDef, FresnelDef, MaterialDef, RenderDef};
use super::textures::SceneTextures;
use super::{SceneSettings, ToneMapping};
use crate::accel::AccelSettings;
use crate::settings::size::{MAX_DEPTH, MAX_IMAGE_SIDE, MAX_SPP};
use device::camera::CameraSpec;
use device::material::{FresnelModel, Material, MaterialKind};
use device::math::Rgb;
use device::noise::{BASES, Basis};
use device::scene::Background;
use device::texture::Colour;

/// The `[accel]` table: which structure, and build parameters in range.
pub fn accel(a: &AccelDef) -> FieldResult<AccelSettings> {
    let mut out = AccelSettings {
        choice: a.kind,
        ..AccelSettings::default()
    };
    if let Some(b) = a.bvh_bins {
        if !(2..=256).contains(&b) {
            return Err(field_error("bvh_bins", format!("must be between 2 and 256, got {b}")));
        }
        out.bvh.bins = b as usize;
    }
    if let Some(m) = a.bvh_max_leaf {
        if !(1..=64).contains(&m) {
            return Err(field_error(
                "bvh_max_leaf",
                format!("must be between 1 and 64, got {m}"),
            ));
        }
        out.bvh.max_leaf = m as usize;
    }
    if let Some(c) = a.bvh_traversal_cost {
        out.bvh.traversal_cost = positive("bvh_traversal_cost", c)?;
    }
    if let Some(c) = a.kd_traversal_cost {
        out.kd.traversal_cost = positive("kd_traversal_cost", c)?;
    }
    if let Some(c) = a.kd_intersection_cost {
        out.kd.intersection_cost = positive("kd_intersection_cost", c)?;
    }
    if let Some(b) = a.kd_empty_bonus {
        if !(0.0..=1.0).contains(&finite("kd_empty_bonus", b)?) {
            return Err(field_error(
                "kd_empty_bonus",
                format!("must be between 0 and 1, got {b}"),
            ));
        }
        out.kd.empty_bonus = b;
    }
    if let Some(m) = a.kd_max_leaf {
        if m == 0 {
            return Err(field_error("kd_max_leaf", "must be at least 1"));
        }
        out.kd.max_leaf = m as usize;
    }
    if let Some(d) = a.kd_max_depth {
        let limit = device::accel::kdtree::MAX_DEPTH as u32 - 1;
        if d == 0 || d > limit {
            return Err(field_error(
                "kd_max_depth",
                format!("must be between 1 and {limit}, got {d}"),
            ));
        }
        out.kd.max_depth = Some(d as usize);
    }
    Ok(out)
}

/// The `[render]` table: image size, samples and depth within the limits.
pub fn settings(r: &RenderDef) -> FieldResult<SceneSettings> {
    for (field, v) in [("width", r.width), ("height", r.height)] {
        if v == 0 || v > MAX_IMAGE_SIDE {
            return Err(field_error(
                field,
                format!("must be between 1 and {MAX_IMAGE_SIDE} pixels, got {v}"),
            ));
        }
    }
    if !(1..=MAX_SPP).contains(&r.spp) {
        return Err(field_error(
            "spp",
            format!(
                "must be between 1 and {MAX_SPP} (the most the film sums exactly), got {}",
                r.spp
            ),
        ));
    }
    if !(1..=MAX_DEPTH).contains(&r.max_depth) {
        return Err(field_error(
            "max_depth",
            format!(
                "must be between 1 (the camera ray) and {MAX_DEPTH}, got {}",
                r.max_depth
            ),
        ));
    }
    Ok(SceneSettings {
        width: r.width,
        height: r.height,
        spp: r.spp,
        max_depth: r.max_depth,
        seed: r.seed,
        roulette_start: r.roulette_start,
        sampler: r.sampler,
        nee: r.nee.into(),
        tone: ToneMapping {
            exposure: positive("exposure", r.exposure)?,
            curve: r.tone_curve,
            gamma: positive("gamma", r.gamma)?,
        },
    })
}

/// The `[camera]` table, for an image of the size `s` gives.
pub fn camera(c: &CameraDef, s: &SceneSettings) -> FieldResult<CameraSpec> {
    let look_from = point("look_from", c.look_from)?;
    let look_at = point("look_at", c.look_at)?;
    let up = vec3("up", c.up)?;
    let view = look_at - look_from;
    if view.length() == 0.0 {
        return Err(field_error("look_at", "must differ from look_from"));
    }
    if up.cross(view).length() <= 1e-6 * up.length() * view.length() {
        return Err(field_error("up", "must not be parallel to the viewing direction"));
    }
    let vfov = finite("vfov", c.vfov)?;
    if !(vfov > 0.0 && vfov < 180.0) {
        return Err(field_error(
            "vfov",
            format!("must be between 0 and 180 degrees, got {vfov}"),
        ));
    }
    if finite("aperture", c.aperture)? < 0.0 {
        return Err(field_error(
            "aperture",
            format!("must not be negative, got {}", c.aperture),
        ));
    }
    let focus_distance = match c.focus_distance {
        Some(d) => positive("focus_distance", d)?,
        None => view.length(),
    };
    let near = finite("near", c.near)?;
    if near < 0.0 {
        return Err(field_error("near", format!("must not be negative, got {near}")));
    }
    Ok(CameraSpec {
        look_from,
        look_at,
        up,
        vfov_degrees: vfov,
        aspect: s.width as f32 / s.height as f32,
        aperture: c.aperture,
        focus_distance,
        near,
    })
}

/// The `[background]` table.
pub fn background(b: &BackgroundDef) -> FieldResult<Background> {
    Ok(match b {
        BackgroundDef::Constant { color } => Background::Constant(rgb("color", *color, f32::INFINITY)?),
        BackgroundDef::Sky { horizon, zenith } => Background::Sky {
            horizon: rgb("horizon", *horizon, f32::INFINITY)?,
            zenith: rgb("zenith", *zenith, f32::INFINITY)?,
        },
    })
}

/// A material with every field zeroed but the class.
pub fn blank_material(kind: MaterialKind) -> Material {
    Material {
        kind,
        albedo: Colour::BLACK,
        emission: Colour::BLACK,
        roughness: 0.0,
        ior: 1.0,
        fresnel: FresnelModel::Exact,
        transmittance: Rgb::WHITE,
        pattern: Colour::BLACK,
        octaves: 0,
        basis: Basis(0),
        _pad: 0,
        frequency: 1.0,
    }
}

/// One `[materials.*]` table; its colours may name `textures`.
pub fn material(def: &MaterialDef, textures: &SceneTextures) -> FieldResult<Material> {
    let reflectance = |field: &str, c: &ColourDef| textures.colour(field, c, 1.0);
    let emission = |c: &ColourDef| textures.colour("emission", c, f32::INFINITY);
    Ok(match def {
        MaterialDef::Diffuse { albedo, emission: e } => Material {
            albedo: reflectance("albedo", albedo)?,
            emission: emission(e)?,
            ..blank_material(MaterialKind::Diffuse)
        },
        MaterialDef::Metal {
            albedo,
            roughness,
            emission: e,
        } => {
            if finite("roughness", *roughness)? < 0.0 {
                return Err(field_error(
                    "roughness",
                    format!("must not be negative, got {roughness}"),
                ));
            }
            Material {
                albedo: reflectance("albedo", albedo)?,
                emission: emission(e)?,
                roughness: *roughness,
                ..blank_material(MaterialKind::Metal)
            }
        }
        MaterialDef::Dielectric {
            ior,
            fresnel,
            transmittance,
            tint,
        } => Material {
            albedo: reflectance("tint", tint)?,
            ior: positive("ior", *ior)?,
            fresnel: match fresnel {
                FresnelDef::Exact => FresnelModel::Exact,
                FresnelDef::Schlick => FresnelModel::Schlick,
            },
            transmittance: rgb("transmittance", *transmittance, 1.0)?,
            ..blank_material(MaterialKind::Dielectric)
        },
        MaterialDef::Coated {
            albedo,
            pattern,
            ior,
            octaves,
            frequency,
            basis,
            emission: e,
        } => {
            let octaves = fields::octaves("octaves", *octaves)?;
            let basis = match u32::try_from(*basis) {
                Ok(b) if b < BASES => Basis(b),
                _ => {
                    return Err(field_error(
                        "basis",
                        format!("must be a noise basis from 0 to {}, got {basis}", BASES - 1),
                    ));
                }
            };
            Material {
                albedo: reflectance("albedo", albedo)?,
                pattern: reflectance("pattern", pattern.as_ref().unwrap_or(albedo))?,
                basis,
                ior: positive("ior", *ior)?,
                octaves,
                frequency: positive("frequency", *frequency)?,
                emission: emission(e)?,
                ..blank_material(MaterialKind::Coated)
            }
        }
        MaterialDef::Emissive { emission: e } => Material {
            emission: emission(e)?,
            ..blank_material(MaterialKind::Emissive)
        },
    })
}
