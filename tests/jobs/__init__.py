"""Tests of the jobs: validate, doctor, watch, health, plan, fleet, the ledger and logbook."""
