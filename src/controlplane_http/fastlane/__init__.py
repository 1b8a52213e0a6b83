"""The fast lane (an opt-in of the hottest routes): `lane` serves their plain requests, `routes` names them and
describes each at start."""
