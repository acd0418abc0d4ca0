"""Which functions SQL sent by the model may call: ordinary scalar, aggregate, window, date, string, math and JSON
functions, per dialect. Anything not listed here is refused, so a function nobody thought of (sleep, file, network,
lock, sequence and admin functions, or functions that run SQL text such as `query_to_xml`) cannot run.

sqlglot parses functions it knows into typed nodes (`exp.Sum`, `exp.DateTrunc`, ...), listed here by class name, and
functions it does not know into `exp.Anonymous`, listed by lower-case name per dialect.
"""

from __future__ import annotations

from sqlglot import exp

#: Typed sqlglot function nodes that are ordinary, side-effect-free computations on values.
_TYPED = """
    And Or Xor Exists Case If Coalesce Nullif Greatest Least Nvl2 DecodeCase EqualNull
    Cast TryCast CastToStrType Convert ConvertToCharset Collate
    Count CountIf Sum Avg Min Max Median Mode Stddev StddevPop StddevSamp Variance VariancePop Corr CovarPop CovarSamp
    RegrAvgx RegrAvgy RegrCount RegrIntercept RegrR2 RegrSlope RegrSxx RegrSxy RegrSyy
    PercentileCont PercentileDisc Quantile ApproxDistinct ApproxQuantile AnyValue First Last
    GroupConcat ArrayAgg LogicalAnd LogicalOr BitwiseAndAgg BitwiseOrAgg BitwiseXorAgg Grouping GroupingId
    JSONArrayAgg JSONObjectAgg JSONBObjectAgg
    RowNumber Rank DenseRank PercentRank CumeDist Ntile Lag Lead FirstValue LastValue NthValue
    Abs Ceil Floor Round Trunc Sqrt Cbrt Pow Exp Ln Log Sign Pi Radians Degrees Rand
    Sin Cos Tan Cot Asin Acos Atan Atan2 Sinh Cosh Tanh Asinh Acosh Atanh WidthBucket Factorial IsNan IsInf SafeDivide
    Lower Upper Length BitLength ByteLength Concat ConcatWs Substring SubstringIndex Left Right Trim Pad Replace
    Reverse Repeat StrPosition Initcap Ascii Chr Split SplitPart Translate Format Space Soundex Levenshtein
    RegexpLike RegexpILike RegexpReplace RegexpExtract RegexpExtractAll RegexpSplit RegexpCount RegexpInstr
    RegexpSubstr StartsWith EndsWith Contains Overlay Stuff Unicode Elt MatchAgainst
    MD5 MD5Digest SHA SHA2 SHA2Digest Hex Unhex LowerHex ToBase64 FromBase64 Encode Decode
    ToChar ToNumber NumberToStr Normalize Typeof
    CurrentDate CurrentTime CurrentTimestamp CurrentDatetime Localtime Localtimestamp UtcDate UtcTime UtcTimestamp
    CurrentTimezone CurrentSchema CurrentDatabase CurrentCatalog CurrentUser SessionUser
    Date Datetime Time Timestamp DateAdd DateSub DateDiff DateTrunc DatetimeAdd DatetimeSub DatetimeDiff
    DatetimeTrunc TimestampAdd TimestampSub TimestampDiff TimestampTrunc TimeAdd TimeSub TimeDiff TimeTrunc DateBin
    Extract Year Quarter Month Week WeekOfYear Day DayOfMonth DayOfWeek DayOfWeekIso DayOfYear Hour Minute Second
    Dayname Monthname LastDay AddMonths MonthsBetween NextDay YearOfWeek YearOfWeekIso
    StrToDate StrToTime StrToUnix TimeToStr TimeToUnix TimeStrToDate TimeStrToTime TimeStrToUnix
    UnixToStr UnixToTime UnixToTimeStr UnixDate UnixSeconds UnixMillis UnixMicros
    TsOrDsAdd TsOrDsDiff TsOrDsToDate TsOrDsToDateStr TsOrDsToDatetime TsOrDsToTime TsOrDsToTimestamp
    DateStrToDate DateToDateStr DateFromParts TimestampFromParts TimeFromParts ToDays
    MakeInterval JustifyDays JustifyHours JustifyInterval ConvertTimezone
    GenerateSeries ExplodingGenerateSeries
    JSONExtract JSONExtractScalar JSONExtractArray JSONBExtract JSONBExtractScalar JSONBContains JSONBExists
    JSONArray JSONObject ParseJSON JSONFormat JSONType JSONKeys JSONExists JSONArrayContains JSONValueArray
    JSONBContainsAnyTopKeys JSONBContainsAllTopKeys JSONBContainsTopKey JSONTable JSONCast
    Array ArrayContains ArrayContainsAll ArrayContainedBy ArrayOverlaps ArraySize ArrayToString StringToArray
    ArrayConcat ArrayPosition ArrayAppend ArrayPrepend ArrayRemove ArraySlice Unnest Explode Struct
"""

ALLOWED_TYPED: frozenset[type[exp.Func]] = frozenset(
    cls for name in _TYPED.split() if isinstance(cls := getattr(exp, name, None), type) and issubclass(cls, exp.Func)
)

# Functions sqlglot leaves anonymous, by dialect. Only reads of the values passed in; no I/O, locks, waits, sequences
# or settings.
_COMMON = """
    abs ceil ceiling floor round trunc truncate sqrt power pow exp ln log log10 log2 mod sign pi degrees radians
    sin cos tan cot asin acos atan atan2 coalesce nullif greatest least
    lower upper length char_length character_length octet_length substr substring trim ltrim rtrim replace
    concat concat_ws instr reverse repeat lpad rpad left right ascii char chr
    count sum avg min max row_number rank dense_rank percent_rank cume_dist ntile lag lead
    first_value last_value nth_value
"""

_ANONYMOUS_BY_DIALECT = {
    "sqlite": """
        iif ifnull printf format glob like likely unlikely likelihood hex quote soundex typeof unicode zeroblob
        total group_concat string_agg date time datetime julianday unixepoch strftime timediff
        json json_array json_array_length json_extract json_insert json_object json_patch json_remove json_replace
        json_set json_type json_valid json_quote json_group_array json_group_object json_each json_tree
        jsonb jsonb_array jsonb_extract jsonb_object
    """,
    "mysql": """
        if ifnull isnull ucase lcase locate position field find_in_set elt format strcmp space insert make_set
        export_set mid quote soundex to_base64 from_base64 hex unhex bin oct conv crc32 md5 sha sha1 sha2 ord
        weight_string char_length bit_length bit_count
        std stddev stddev_pop stddev_samp variance var_pop var_samp bit_and bit_or bit_xor group_concat
        now curdate current_date curtime current_time current_timestamp localtime localtimestamp sysdate
        utc_date utc_time utc_timestamp date time timestamp year month day dayofmonth dayofweek dayofyear weekday
        week weekofyear yearweek quarter hour minute second microsecond dayname monthname last_day makedate
        maketime period_add period_diff from_days to_days to_seconds from_unixtime unix_timestamp convert_tz
        date_format time_format str_to_date get_format datediff timediff timestampdiff timestampadd date_add
        date_sub adddate subdate addtime subtime sec_to_time time_to_sec extract
        regexp_replace regexp_substr regexp_instr regexp_like
        json_extract json_unquote json_value json_query json_contains json_contains_path json_length json_keys
        json_object json_array json_arrayagg json_objectagg json_valid json_type json_depth json_search
        json_compact json_detailed json_pretty json_quote json_exists json_overlaps json_equals json_normalize
        database schema version
    """,
    "postgres": """
        date_part date_trunc date_bin age now clock_timestamp statement_timestamp transaction_timestamp
        timeofday isfinite make_date make_time make_timestamp make_timestamptz make_interval justify_days
        justify_hours justify_interval to_char to_date to_timestamp to_number extract timezone
        btrim strpos position split_part initcap format translate regexp_match regexp_matches regexp_replace
        regexp_split_to_array regexp_split_to_table regexp_count regexp_instr regexp_like regexp_substr
        starts_with string_to_array array_to_string md5 sha224 sha256 sha384 sha512 encode decode convert_to
        convert_from bit_length quote_literal quote_ident
        quote_nullable num_nonnulls num_nulls div cbrt random width_bucket factorial gcd lcm scale
        string_agg array_agg bool_and bool_or every bit_and bit_or bit_xor stddev stddev_pop stddev_samp
        variance var_pop var_samp corr covar_pop covar_samp regr_avgx regr_avgy regr_count regr_intercept
        regr_r2 regr_slope regr_sxx regr_sxy regr_syy percentile_cont percentile_disc mode
        array_length array_lower array_upper array_ndims array_dims array_position array_positions cardinality
        array_append array_prepend array_cat array_remove array_replace unnest generate_series
        to_json to_jsonb row_to_json array_to_json json_build_object jsonb_build_object json_build_array
        jsonb_build_array json_object jsonb_object json_agg jsonb_agg json_object_agg jsonb_object_agg
        json_array_length jsonb_array_length json_array_elements jsonb_array_elements json_array_elements_text
        jsonb_array_elements_text json_each jsonb_each json_each_text jsonb_each_text json_extract_path
        jsonb_extract_path json_extract_path_text jsonb_extract_path_text json_object_keys jsonb_object_keys
        json_typeof jsonb_typeof jsonb_strip_nulls jsonb_pretty jsonb_set jsonb_insert jsonb_path_exists
        jsonb_path_match jsonb_path_query jsonb_path_query_array jsonb_path_query_first
        current_database current_schema
    """,
}

ALLOWED_NAMES: dict[str, frozenset[str]] = {
    dialect: frozenset((_COMMON + names).split()) for dialect, names in _ANONYMOUS_BY_DIALECT.items()
}


def function_name(node: exp.Func) -> str:
    """The function's name as the model would recognise it: as written for an unknown function, else sqlglot's."""
    if isinstance(node, exp.Anonymous):
        return str(node.name)
    return node.sql_name()


def is_allowed(node: exp.Func, dialect: str) -> bool:
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower() in ALLOWED_NAMES.get(dialect, frozenset())
    return type(node) in ALLOWED_TYPED
