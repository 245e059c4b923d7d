"""What a user wrote: bench files, Eval files, params, the YAML source they come from, and
the Eval control audit (which inputs a run may differ by). Loading is strict and every
refusal names the file, the line and the fix."""
