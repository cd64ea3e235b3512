//! The (method, version) tables generated from the vendored schema files.
