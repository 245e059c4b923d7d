;; A custom:wasm grader in the spec's ABI: passes when the envelope it is given contains
;; the bytes "fixed" anywhere (a bump allocator; free is a no-op).
(module
  (memory (export "memory") 2)
  (global $heap (mut i32) (i32.const 4096))
  (data (i32.const 16) "{\"pass\":true,\"score\":1,\"reason\":\"found fixed\"}")
  (data (i32.const 256) "{\"pass\":false,\"score\":0,\"reason\":\"no fixed\"}")
  (func (export "alloc") (param $n i32) (result i32)
    (local $p i32)
    (local.set $p (global.get $heap))
    (global.set $heap (i32.add (global.get $heap) (local.get $n)))
    ;; grow when the bump passes the end of memory
    (if (i32.gt_u (global.get $heap) (i32.mul (memory.size) (i32.const 65536)))
      (then (drop (memory.grow (i32.add (i32.div_u (local.get $n) (i32.const 65536)) (i32.const 1))))))
    (local.get $p))
  (func (export "free") (param i32) (param i32))
  (func (export "evaluate") (param $ptr i32) (param $len i32) (result i64)
    (local $i i32) (local $end i32)
    (local.set $i (local.get $ptr))
    (local.set $end (i32.sub (i32.add (local.get $ptr) (local.get $len)) (i32.const 5)))
    (block $done
      (loop $scan
        (br_if $done (i32.gt_s (local.get $i) (local.get $end)))
        (if (i32.and
              (i32.eq (i32.load (local.get $i)) (i32.const 0x65786966))       ;; "fixe"
              (i32.eq (i32.load8_u (i32.add (local.get $i) (i32.const 4))) (i32.const 0x64)))  ;; "d"
          (then (return (i64.or (i64.shl (i64.const 16) (i64.const 32)) (i64.const 46)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $scan)))
    (i64.or (i64.shl (i64.const 256) (i64.const 32)) (i64.const 44))))
