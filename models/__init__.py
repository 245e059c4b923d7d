"""What speaks to a model: judge providers (transports, pricing, the live catalog) and the
scripted model server the tests and the real harness binaries run against."""
