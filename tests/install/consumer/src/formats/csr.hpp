// The consumer's own header; must never be picked up by la.
#pragma once
#define CONSUMER_CSR_HPP 1
