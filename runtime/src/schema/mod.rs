//! What generated code calls and returns: the validators' helpers, the kind rules, the transport binding, the shapes
//! of the generated tables and the problems.

pub mod binding;
pub mod check;
pub mod kind;
pub mod model;
pub mod problem;
