"""What the study's private grid takes as public knowledge about its tables (issue 50).

A private TabDDPM releases its column transforms' statistics with OpenDP from a share of ε unless they are public
(:mod:`memviz.models.dpstats`). At the study's private scale (1,000 Adult rows) the thresholded releases could
release nothing at ε ≤ 10 (a category or a range of values must hold about ln(1/δ_q)/ε_q rows, thousands), so the
study gives Adult's domain as public, as the DP synthetic-data literature does:

* **categories**: every category of every categorical column as UCI's ``adult.names`` documents it (null: the
  "?" of workclass, occupation and native-country, read as missing);
* **bounds**: age 17-90 (the extract's filter, the Census top-code), education-num 1-16 (its code list),
  hours-per-week 1-99 (the top-code), capital-gain 0-99,999 (the top-code); capital-loss 0-5,000 and fnlwgt
  10,000-1,500,000 are this study's assumptions (no published range).

The numerical columns' histograms (the quantile transforms) are still released privately: they spend the
preprocessing's share, 0.1 of ε.
"""
from __future__ import annotations

ADULT = {
    "bounds": {"age": [17, 90], "fnlwgt": [10_000, 1_500_000], "education-num": [1, 16],
               "capital-gain": [0, 99_999], "capital-loss": [0, 5_000], "hours-per-week": [1, 99]},
    "categories": {
        "workclass": ["Federal-gov", "Local-gov", "Never-worked", "Private", "Self-emp-inc", "Self-emp-not-inc",
                      "State-gov", "Without-pay", None],
        "education": ["10th", "11th", "12th", "1st-4th", "5th-6th", "7th-8th", "9th", "Assoc-acdm", "Assoc-voc",
                      "Bachelors", "Doctorate", "HS-grad", "Masters", "Preschool", "Prof-school", "Some-college"],
        "marital-status": ["Divorced", "Married-AF-spouse", "Married-civ-spouse", "Married-spouse-absent",
                           "Never-married", "Separated", "Widowed"],
        "occupation": ["Adm-clerical", "Armed-Forces", "Craft-repair", "Exec-managerial", "Farming-fishing",
                       "Handlers-cleaners", "Machine-op-inspct", "Other-service", "Priv-house-serv", "Prof-specialty",
                       "Protective-serv", "Sales", "Tech-support", "Transport-moving", None],
        "relationship": ["Husband", "Not-in-family", "Other-relative", "Own-child", "Unmarried", "Wife"],
        "race": ["Amer-Indian-Eskimo", "Asian-Pac-Islander", "Black", "Other", "White"],
        "sex": ["Female", "Male"],
        "native-country": ["Cambodia", "Canada", "China", "Columbia", "Cuba", "Dominican-Republic", "Ecuador",
                           "El-Salvador", "England", "France", "Germany", "Greece", "Guatemala", "Haiti",
                           "Holand-Netherlands", "Honduras", "Hong", "Hungary", "India", "Iran", "Ireland", "Italy",
                           "Jamaica", "Japan", "Laos", "Mexico", "Nicaragua", "Outlying-US(Guam-USVI-etc)", "Peru",
                           "Philippines", "Poland", "Portugal", "Puerto-Rico", "Scotland", "South", "Taiwan",
                           "Thailand", "Trinadad&Tobago", "United-States", "Vietnam", "Yugoslavia", None],
        "income": ["<=50K", ">50K"],
    },
}

#: dataset -> the privacy settings of its private grid's DP arms (public bounds and categories)
PUBLIC = {"adult": ADULT}
