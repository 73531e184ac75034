//! The C ABI declared once per entry point (issue 33), in the manner of
//! faer-ffi's `funcs!`: one `export!` gives the `double` export, its `_f32`
//! twin and their `_workspace` queries, each with a `# Safety` section written
//! from its parameters. cbindgen reads the expanded crate (`[parse.expand]` in
//! `cbindgen.toml`), so the header declares what these expand to.
//!
//! ```text
//! export! {
//!     /// What the call does.
//!     fn mvnmf_x / mvnmf_x_f32(
//!         views: *const V = "`n_views`",
//!         n_views: usize,
//!         q: *mut T = "`n × r`",
//!         labels: *const u8 = "`n` bytes",
//!         params: *const mvnmf_x_params,
//!         work: *mut c_void,
//!         work_bytes: usize,
//!     ) { /* a Result<mvnmf_status, Error>, generic over T and V */ }
//!     /// What the size depends on (after "Workspace bytes of `mvnmf_x`").
//!     workspace mvnmf_x_workspace / mvnmf_x_f32_workspace(
//!         n_views: usize, params: *const mvnmf_x_params,
//!     ) { /* a Result<usize, Error> */ };
//! }
//! ```
//!
//! * In the parameters and the bodies `T` is the scalar (`f64`, `f32` in the
//!   twin) and `V` the view descriptor (`mvnmf_view`, `mvnmf_view_f32`); a
//!   declaration without `/ twin` is `double` alone. A query without `/ twin`
//!   serves both precisions; its `bytes: *mut usize` is appended.
//! * A pointer's `= "extent"` says how much it points at, in the words of its
//!   `# Safety` line (`T` pointers get "doubles"/"floats" appended);
//!   `params`, `report`, `progress`, `fit`, `graph`, `comm`, `work` and `bytes` have
//!   the lines of the conventions (`ffi/mod.rs`), and no extent.
//! * `..solver(work, work_bytes, progress, user, report)` in a list stands for
//!   the solvers' tail: those five parameters with the conventions' types;
//!   `..work(work, work_bytes)` the first two alone.
//!   Names that share a type are listed before it once (`n, k: usize`,
//!   `truth, pred: *const u32 = "`n` labels"`), as C's `size_t n, k;`.
//! * A query's list `(..N)` is the call's first `N` parameters (the shapes
//!   and options the size depends on), not written again; `(..N, more: T)`
//!   adds its own after them. A call's list opening with `..N` likewise
//!   takes the previous call's first `N` (an encode's shapes and options are
//!   its fit's), `(..)` all of them: the names come from the caller's text either way, so the
//!   bodies see them (hygiene), and `macro_rules!` suffices.
//! * `workspace q for call(...) { ... };` alone declares a query apart from
//!   its call (where the header orders two queries before their calls);
//!   its list `(..)` is the previous query's.
//! * `fn x / x_f32(...) at report { ... }`: a body that says where it
//!   refused (a `Result<mvnmf_status, Located>`, run by `entry_at!`, which
//!   writes the location to `*report`).
//! * The declarations of one `export! { ...; ...; }`, each ended by `;`,
//!   give every `double` export (with its query) in the order written, then
//!   every `_f32` twin (with its query): the header's order where a file lists
//!   its twins after its calls.
//! * The call's body runs behind the panic boundary under the contract
//!   (`entry!`), the query's through `query` (`workspace!`).

/// One entry point: see the module doc.
macro_rules! export {
    // ---- the declarations, each ended by `;`, as `@pre` groups them: every
    // `double` export (and query) first, in the order given, then every `_f32`
    // twin (the header's order, where the twins come after the calls) ---------
    (@list $($item:tt)+) => {
        $(export!(@dbl $item);)+
        $(export!(@twin $item);)+
    };
    // A query declared apart from its call (where the header has the queries
    // of two calls before both calls).
    (@dbl {query $wdoc:tt $w64:ident $n64:ident $wp:tt $wbody:block $fp:tt}) => {
        export!(@seqq $n64 [] $fp $wdoc $w64 [] $wp $wbody);
    };
    (@dbl {$doc:tt $n64:ident $n32:tt $rep:tt $p:tt $body:block {$($w:tt)*}}) => {
        export!(@seqdbl $n64 $n32 $rep $doc $p $body $($w)*);
    };
    (@twin {query $($x:tt)*}) => {};
    (@twin {$doc:tt $n64:ident $n32:tt $rep:tt $p:tt $body:block {$($w:tt)*}}) => {
        export!(@seqtwin $n32 $n64 $p $rep $body $($w)*);
    };
    // ---- a call's list that opens with `..N` takes the previous call's first
    // `N` parameters (an encode's shapes and options, those of its fit), `..`
    // all of them; resolved here, one declaration at a time, then `@list` -----
    (@pre [$($d:tt)*] $prev:tt) => { export!(@list $($d)*); };
    (@pre [$($d:tt)*] $prev:tt
        $(#[$wdoc:meta])*
        workspace $w64:ident for $n64:ident $wp:tt $wbody:block; $($rest:tt)*
    ) => {
        export!(@pre [$($d)* {query [$(#[$wdoc])*] $w64 $n64 $wp $wbody $prev}] $wp $($rest)*);
    };
    (@pre $d:tt $prev:tt
        $(#[$doc:meta])*
        fn $n64:ident $(/ $n32:ident)? ($($p:tt)*) $(at $rep:ident)? $body:block
        $(
            $(#[$wdoc:meta])*
            workspace $w64:ident $(/ $w32:ident)? ($($wp:tt)*) $wbody:block
        )?
        ; $($rest:tt)*
    ) => {
        export!(@share {$d [[$(#[$doc])*] $n64 [$($n32)?] [$($rep)?]] $body
            {$([$(#[$wdoc])*] $w64 [$($w32)?] ($($wp)*) $wbody)?} [$($rest)*]}
            $prev ($($p)*));
    };
    (@share $st:tt $prev:tt (..)) => { export!(@decl $st $prev); };
    (@share $st:tt $prev:tt (..$n:tt $($m:tt)*)) => {
        export!(@take {@decl $st} $prev (..$n $($m)*));
    };
    (@share $st:tt $prev:tt $p:tt) => { export!(@decl $st $p); };
    (@decl {[$($d:tt)*] [$($head:tt)*] $body:block $w:tt [$($rest:tt)*]} ($($p:tt)*) $($e:tt)?) => {
        export!(@pre [$($d)* {$($head)* ($($p)*) $body $w}] ($($p)*) $($rest)*);
    };
    // The first `N` parameters of `$fp` (`..N`, `N` from 2 to 10), then the
    // list's own, handed to `$cont`; a list that opens with `..solver(...)`
    // or `..work(...)` goes as it is.
    (@take $cont:tt $fp:tt (..2 $($m:tt)*)) => { export!(@lead $cont [] [_ _] $fp $($m)*); };
    (@take $cont:tt $fp:tt (..3 $($m:tt)*)) => { export!(@lead $cont [] [_ _ _] $fp $($m)*); };
    (@take $cont:tt $fp:tt (..4 $($m:tt)*)) => { export!(@lead $cont [] [_ _ _ _] $fp $($m)*); };
    (@take $cont:tt $fp:tt (..5 $($m:tt)*)) => { export!(@lead $cont [] [_ _ _ _ _] $fp $($m)*); };
    (@take $cont:tt $fp:tt (..6 $($m:tt)*)) => { export!(@lead $cont [] [_ _ _ _ _ _] $fp $($m)*); };
    (@take $cont:tt $fp:tt (..7 $($m:tt)*)) => { export!(@lead $cont [] [_ _ _ _ _ _ _] $fp $($m)*); };
    (@take $cont:tt $fp:tt (..8 $($m:tt)*)) => { export!(@lead $cont [] [_ _ _ _ _ _ _ _] $fp $($m)*); };
    (@take $cont:tt $fp:tt (..9 $($m:tt)*)) => { export!(@lead $cont [] [_ _ _ _ _ _ _ _ _] $fp $($m)*); };
    (@take $cont:tt $fp:tt (..10 $($m:tt)*)) => { export!(@lead $cont [] [_ _ _ _ _ _ _ _ _ _] $fp $($m)*); };
    (@take {$($cont:tt)*} $fp:tt $l:tt) => { export!($($cont)* $l ()); };
    // ---- the declarations, each ended by `;`, through `@pre` ------------------
    (#[$m:meta] $($t:tt)*) => { export!(@pre [] () #[$m] $($t)*); };
    (fn $($t:tt)*) => { export!(@pre [] () fn $($t)*); };
    (workspace $($t:tt)*) => { export!(@pre [] () workspace $($t)*); };
    (@twinq [] $($x:tt)*) => {};
    (@twinq [$w32:ident] $n32:ident $w64:ident $wp:tt $wbody:block $fp:tt) => {
        export!(@query {query, $w32, [
            #[doc = concat!(" Workspace bytes of `", stringify!($n32), "` (as `",
                stringify!($w64), "`).")]
        ], $wbody} [f32 mvnmf_view_f32 "float"] $wp $fp);
    };
    // A query on the call's first `N` parameters (`(..N)`, then any of its own:
    // `(..3, n_classes: usize)`), taken from the call's list one token at a
    // time, up to the `N`-th comma.
    (@query $ctx:tt $pr:tt (..) $fp:tt) => { export!(@query $ctx $pr $fp ()); };
    (@query $ctx:tt $pr:tt (..$n:tt $($m:tt)*) $fp:tt) => {
        export!(@take {@query $ctx $pr} $fp (..$n $($m)*));
    };
    (@lead {$($cont:tt)*} [$($acc:tt)*] [] $fp:tt $(, $($m:tt)*)?) => {
        export!($($cont)* ($($acc)* $($($m)*)?) ());
    };
    (@lead {$($cont:tt)*} [$($acc:tt)*] [] $fp:tt $($m:tt)*) => {
        export!($($cont)* ($($acc)* $($m)*) ());
    };
    (@lead $cont:tt [$($acc:tt)*] [_ $($k:tt)*] (, $($fp:tt)*) $($m:tt)*) => {
        export!(@lead $cont [$($acc)* ,] [$($k)*] ($($fp)*) $($m)*);
    };
    (@lead $cont:tt [$($acc:tt)*] $k:tt ($t:tt $($fp:tt)*) $($m:tt)*) => {
        export!(@lead $cont [$($acc)* $t] $k ($($fp)*) $($m)*);
    };
    // `bytes` appended here and read by the body: one expansion, one hygiene.
    (@query {query, $name:ident, $doc:tt, $body:block} $pr:tt ($($wp:tt)*) $fp:tt) => {
        export!(@munch {[query bytes], $name, $doc, $body} $pr [] [] [] $($wp)* ,
            bytes: *mut usize,);
    };

    // ---- the parameters, one at a time: the C signature (`T`, `V` replaced),
    // the `# Safety` lines, the names that are `float` in the twin -------------
    (@munch $ctx:tt $pr:tt $sig:tt $saf:tt $tl:tt , $($rest:tt)*) => {
        export!(@munch $ctx $pr $sig $saf $tl $($rest)*);
    };
    // The solver's tail, named once (`..solver(work, work_bytes, progress,
    // user, report)`): the caller's names, the conventions' types.
    (@munch $ctx:tt $pr:tt $sig:tt $saf:tt $tl:tt
        ..solver($w:ident, $wb:ident, $pg:ident, $u:ident, $r:ident) $($rest:tt)*) => {
        export!(@munch $ctx $pr $sig $saf $tl $w: *mut c_void, $wb: usize,
            $pg: mvnmf_progress_fn, $u: *mut c_void, $r: *mut mvnmf_report, $($rest)*);
    };
    // Names that share a type (`truth, pred: *const u32 = "`n` labels"`, as C's
    // `size_t n, k;`): each name gets the type (and extent), as if written out.
    (@munch $ctx:tt $pr:tt $sig:tt $saf:tt $tl:tt $p:ident , $($rest:tt)*) => {
        export!(@names [$ctx $pr $sig $saf $tl] [$p] $($rest)*);
    };
    (@names $st:tt [$($n:ident)*] $p:ident , $($rest:tt)*) => {
        export!(@names $st [$($n)* $p] $($rest)*);
    };
    (@names $st:tt $ns:tt $p:ident : $($rest:tt)*) => {
        export!(@ntype $st $ns $p [] $($rest)*);
    };
    (@ntype $st:tt $ns:tt $p:ident [$($t:tt)*] , $($rest:tt)*) => {
        export!(@spread $st $ns [$($t)*] [] $p: $($t)*, $($rest)*);
    };
    (@ntype $st:tt $ns:tt $p:ident [$($t:tt)*] $x:tt $($rest:tt)*) => {
        export!(@ntype $st $ns $p [$($t)* $x] $($rest)*);
    };
    (@spread $st:tt [$n:ident $($ns:ident)*] [$($t:tt)*] [$($acc:tt)*] $($rest:tt)*) => {
        export!(@spread $st [$($ns)*] [$($t)*] [$($acc)* $n: $($t)*,] $($rest)*);
    };
    (@spread [$ctx:tt $pr:tt $sig:tt $saf:tt $tl:tt] [] $t:tt [$($acc:tt)*] $($rest:tt)*) => {
        export!(@munch $ctx $pr $sig $saf $tl $($acc)* $($rest)*);
    };
    (@munch $ctx:tt $pr:tt $sig:tt $saf:tt $tl:tt ..work($w:ident, $wb:ident) $($rest:tt)*) => {
        export!(@munch $ctx $pr $sig $saf $tl $w: *mut c_void, $wb: usize, $($rest)*);
    };
    // A parameter's name, matched against those of the conventions (`$n`), and
    // itself (`$p`, which keeps the caller's hygiene).
    (@munch $ctx:tt $pr:tt $sig:tt $saf:tt $tl:tt $p:ident: $($rest:tt)*) => {
        export!(@named $p, $p, $ctx $pr $sig $saf $tl $($rest)*);
    };
    (@named work, $($x:tt)*) => {
        export!(@conv "`work`: `work_bytes` bytes (any alignment)." $($x)*);
    };
    (@named bytes, $($x:tt)*) => { export!(@conv "`bytes`: one write." $($x)*); };
    (@named params, $($x:tt)*) => {
        export!(@conv "`params`: reading one (NULL: the defaults)." $($x)*);
    };
    (@named report, $($x:tt)*) => { export!(@conv "`report`: one write." $($x)*); };
    (@named graph, $($x:tt)*) => {
        export!(@conv "`graph`: reading one `mvnmf_graph` descriptor, with the arrays its struct documents."
            $($x)*);
    };
    (@named comm, $($x:tt)*) => {
        export!(@conv "`comm`: reading one `mvnmf_dist_comm`, whose callbacks are called during the call as its struct documents."
            $($x)*);
    };
    (@named progress, $($x:tt)*) => {
        export!(@conv "`progress`: a function that may be called with `user` during the call."
            $($x)*);
    };
    (@named fit, $($x:tt)*) => {
        export!(@conv "`fit`: a function that may be called with `user` during the call."
            $($x)*);
    };
    (@named $n:ident, $p:ident, $ctx:tt $pr:tt $sig:tt $saf:tt $tl:tt $($rest:tt)*) => {
        export!(@typed $ctx $pr $sig $saf $tl $p: $($rest)*);
    };
    // A parameter of the conventions: its type as written, the `# Safety` line given.
    (@conv $line:literal $p:ident, $ctx:tt $pr:tt [$($sig:tt)*] [$($saf:tt)*] $tl:tt
        $t:ty, $($rest:tt)*) => {
        export!(@munch $ctx $pr [$($sig)* $p: $t,] [$($saf)* [$line]] $tl $($rest)*);
    };
    (@typed $ctx:tt [$r:ident $v:ident $u:literal] [$($sig:tt)*] [$($saf:tt)*] [$($tl:tt)*]
        $p:ident: *const V = "one", $($rest:tt)*) => {
        export!(@munch $ctx [$r $v $u] [$($sig)* $p: *const $v,] [$($saf)*
            [concat!("`", stringify!($p), "`: reading one `", stringify!($v),
                "` descriptor, with the arrays its struct documents.")]]
            [$($tl)* "`", stringify!($p), "` (`mvnmf_view_f32`), ",] $($rest)*);
    };
    (@typed $ctx:tt [$r:ident $v:ident $u:literal] [$($sig:tt)*] [$($saf:tt)*] [$($tl:tt)*]
        $p:ident: *const V = $e:literal, $($rest:tt)*) => {
        export!(@munch $ctx [$r $v $u] [$($sig)* $p: *const $v,] [$($saf)*
            [concat!("`", stringify!($p), "`: reading ", $e, " `",
                stringify!($v), "` descriptors, each with the arrays its struct documents.")]]
            [$($tl)* "`", stringify!($p), "` (`mvnmf_view_f32`), ",] $($rest)*);
    };
    // A pointer array (`*const *mut T`, `*const *const T`): read, whatever it points at.
    (@typed $ctx:tt [$r:ident $v:ident $u:literal] [$($sig:tt)*] [$($saf:tt)*] [$($tl:tt)*]
        $p:ident: *const *$m:tt T = $e:literal, $($rest:tt)*) => {
        export!(@munch $ctx [$r $v $u] [$($sig)* $p: *const *$m $r,] [$($saf)*
            [concat!("`", stringify!($p), "`: reading ", $e, " (", $u,
                "s).")]]
            [$($tl)* "`", stringify!($p), "`, ",] $($rest)*);
    };
    // `*const` is read, `*mut` written.
    (@typed $ctx:tt [$r:ident $v:ident $u:literal] [$($sig:tt)*] [$($saf:tt)*] [$($tl:tt)*]
        $p:ident: *$m:tt T = $e:literal, $($rest:tt)*) => {
        export!(@munch $ctx [$r $v $u] [$($sig)* $p: *$m $r,] [$($saf)*
            [concat!("`", stringify!($p), "`: ", export!(@rw $m), " ", $e, " ", $u, "s.")]]
            [$($tl)* "`", stringify!($p), "`, ",] $($rest)*);
    };
    (@typed $ctx:tt $pr:tt [$($sig:tt)*] [$($saf:tt)*] $tl:tt
        $p:ident: *$m:tt $t:ty = $e:literal, $($rest:tt)*) => {
        export!(@munch $ctx $pr [$($sig)* $p: *$m $t,] [$($saf)*
            [concat!("`", stringify!($p), "`: ", export!(@rw $m), " ", $e, ".")]]
            $tl $($rest)*);
    };
    (@typed $ctx:tt $pr:tt [$($sig:tt)*] $saf:tt $tl:tt
        $p:ident: $t:ty, $($rest:tt)*) => {
        export!(@munch $ctx $pr [$($sig)* $p: $t,] $saf $tl $($rest)*);
    };

    // ---- the functions -------------------------------------------------------
    (@munch {twin $kind:tt, $name:ident, $n64:ident, $body:block} $pr:tt $sig:tt $saf:tt
        [$($tl:tt)*]) => {
        export!(@emit {$kind, $name, [
            #[doc = concat!(" `", stringify!($n64), "` in single precision: `float` for ",
                $($tl)* "the other arguments as there.")]
        ], $body} $pr $sig $saf);
    };
    (@munch $ctx:tt $pr:tt $sig:tt $saf:tt $tl:tt) => {
        export!(@emit $ctx $pr $sig $saf);
    };
    (@emit {$kind:tt, $name:ident, [$($doc:tt)*], $body:block} [$r:ident $v:ident $u:literal]
        [$($sig:tt)*] [$([$($saf:tt)*])*]) => {
        $($doc)*
        #[doc = ""]
        #[doc = " # Safety"]
        #[doc = " Every pointer is NULL (refused where it is required) or valid as listed:"]
        $(#[doc = concat!(" * ", $($saf)*)])*
        #[doc = " Outputs overlap nothing else; no buffer changes during the call."]
        #[no_mangle]
        pub unsafe extern "C" fn $name($($sig)*) -> mvnmf_status {
            #[allow(dead_code)]
            type T = $r;
            #[allow(dead_code)]
            type V = $v;
            export!(@body $kind $body)
        }
    };
    // The body's runner: `[]` a call, `[report]` a call that says where
    // (`at report`), `[query bytes]` a query. One panic boundary each.
    (@body [query $bytes:ident] $body:block) => { workspace!($bytes, $body) };
    (@body [] $body:block) => { entry!($body) };
    (@body [$report:ident] $body:block) => { entry_at!($report, $body) };
    (@rw const) => { "reading" };
    (@rw mut) => { "writing" };

    (@seqdbl $n64:ident [$($n32:ident)?] $rep:tt [$($doc:tt)*] ($($p:tt)*) $body:block
        $($w:tt)*) => {
        export!(@seqq $n64 [$($n32)?] ($($p)*) $($w)*);
        export!(@munch {$rep, $n64, [
            $($doc)*
            $(
                #[doc = ""]
                #[doc = concat!(" Single-precision twin: `", stringify!($n32), "`.")]
            )?
        ], $body} [f64 mvnmf_view "double"] [] [] [] $($p)* ,);
    };
    (@seqq $n64:ident $n32:tt $fp:tt) => {};
    (@seqq $n64:ident $n32:tt $fp:tt [$($wdoc:tt)*] $w64:ident $w32:tt ($($wp:tt)*)
        $wbody:block) => {
        export!(@query {query, $w64, [
            #[doc = concat!(" Workspace bytes of `", stringify!($n64), "`",
                export!(@andof $w32 $n32))]
            $($wdoc)*
        ], $wbody} [f64 mvnmf_view "double"] ($($wp)*) $fp);
    };
    (@andof [$w32:ident] $n:tt) => { "" };
    (@andof [] [$n32:ident]) => { concat!(" and of `", stringify!($n32), "`") };
    (@andof [] []) => { "" };
    (@seqtwin [] $($x:tt)*) => {};
    (@seqtwin [$n32:ident] $n64:ident $p:tt $rep:tt $body:block) => {
        export!(@seqtwin2 $n32 $n64 $p $rep $body);
    };
    (@seqtwin [$n32:ident] $n64:ident $p:tt $rep:tt $body:block
        $wdoc:tt $w64:ident [$($w32:ident)?] $wp:tt $wbody:block) => {
        export!(@twinq [$($w32)?] $n32 $w64 $wp $wbody $p);
        export!(@seqtwin2 $n32 $n64 $p $rep $body);
    };
    (@seqtwin2 $n32:ident $n64:ident ($($p:tt)*) $rep:tt $body:block) => {
        export!(@munch {twin $rep, $n32, $n64, $body}
            [f32 mvnmf_view_f32 "float"] [] [] [] $($p)* ,);
    };
}

/// The magnitude rule of the shallow and deep solvers (`steps::scale`), one
/// paragraph of their header docs (`#[doc = magnitudes_doc!()]`, one line of
/// the header a line here).
macro_rules! magnitudes_doc {
    () => {
        concat!(
            " Magnitudes: any finite data with `½ Σ_v ‖X_v‖²_F ≤ 2^999` (about 5e300;\n",
            " above, `MVNMF_STATUS_INPUT_TOO_LARGE` and nothing written); data whose\n",
            " largest entry is outside [2^-64, 2^64] is solved at an internal power-of-two\n",
            " scale with the weights scaled to match (the same minimisers; `eps` then\n",
            " guards the scaled problem; small data is scaled up only while the scaled\n",
            " weights stay below 2^256); factors and objective come back in the caller's\n",
            " units."
        )
    };
}

/// The encodes' magnitude paragraph (joint NMF, MvSL, deep), as
/// [`magnitudes_doc!`].
macro_rules! encode_magnitudes_doc {
    () => {
        concat!(
            " Magnitudes: as the fits (large inputs are scaled down, small ones are not\n",
            " scaled up); the bases too must have half their sum of squares at most 2^999\n",
            " (else `MVNMF_STATUS_INPUT_TOO_LARGE`)."
        )
    };
}
